import HandoffCore
import NIOCore
import HandoffStreamFrames

/// Message bodies to and from bytes (the frame's type byte plus body).
public enum PeerMessageCoding {
    public static func encode(_ m: PeerMessage) -> [UInt8] {
        var out: [UInt8] = [m.typeCode]
        switch m {
        case .hello(let h):
            out += PeerHello.magic
            out += [UInt8(h.version >> 8), UInt8(h.version & 0xFF), UInt8(h.minimumVersion >> 8), UInt8(h.minimumVersion & 0xFF)]
            var d: [String: PropertyValue] = ["deviceName": .string(h.deviceName)]
            if h.purpose != .link { d["purpose"] = .string(h.purpose.rawValue) }
            if let port = h.listenPort { d["listenPort"] = .integer(Int64(port)) }
            if let time = h.time { d["time"] = .date(time) }
            if let instance = h.instance { d["instance"] = .string(instance) }
            out += PropertyBinaryEncoding.encode(.dictionary(d))
        case .subscribe:
            out += PropertyBinaryEncoding.encode(.dictionary([:]))
        case .offer(let s):
            out += PropertyBinaryEncoding.encode(.dictionary(s.map { ["activity": $0.propertyList] } ?? [:]))
        case .fetch(let r, let id):
            out += PropertyBinaryEncoding.encode(.dictionary(["requestID": .integer(Int64(bitPattern: r)), "activityID": .string(id.rawValue)]))
        case .fetched(let r, .activity(let a, let stale)):
            out += PropertyBinaryEncoding.encode(.dictionary([
                "requestID": .integer(Int64(bitPattern: r)), "activity": ActivityPropertyList.encode(a), "stale": .boolean(stale),
            ]))
        case .fetched(let r, .failure(let code, let message)):
            out += PropertyBinaryEncoding.encode(.dictionary([
                "requestID": .integer(Int64(bitPattern: r)), "errorCode": .string(code), "errorMessage": .string(message),
            ]))
        case .continued(let id):
            out += PropertyBinaryEncoding.encode(.dictionary(["activityID": .string(id.rawValue)]))
        case .error(let code, let message):
            out += PropertyBinaryEncoding.encode(.dictionary(["code": .string(code), "message": .string(message)]))
        case .streamOpen(let id, let document):
            var d: [String: PropertyValue] = ["activityID": .string(id.rawValue)]
            if document { d["document"] = .boolean(true) }
            out += PropertyBinaryEncoding.encode(.dictionary(d))
        case .streamAccepted(let length):
            out += PropertyBinaryEncoding.encode(.dictionary(length.map { ["length": .integer($0)] } ?? [:]))
        case .pairCommit(let bytes):
            out += PropertyBinaryEncoding.encode(.dictionary(["commitment": .data(bytes)]))
        case .pairNonce(let bytes):
            out += PropertyBinaryEncoding.encode(.dictionary(["nonce": .data(bytes)]))
        case .pairConfirm:
            out += PropertyBinaryEncoding.encode(.dictionary([:]))
        case .advertisementKey(let generation, let key):
            out += PropertyBinaryEncoding.encode(.dictionary(["generation": .integer(Int64(clamping: generation)), "key": .data(key)]))
        case .account(let statements):
            out += PropertyBinaryEncoding.encode(.dictionary(["statements": .array(statements.map(PropertyValue.data))]))
        case .keptIndex(let entries):
            let list = entries.map { PropertyValue.dictionary(["origin": .data($0.origin), "sequence": .integer(Int64(bitPattern: $0.sequence))]) }
            out += PropertyBinaryEncoding.encode(.dictionary(["index": .array(list)]))
        case .kept(let items):
            out += PropertyBinaryEncoding.encode(.dictionary(["items": .array(items.map(PropertyValue.data))]))
        case .clipboard(let offer):
            out += PropertyBinaryEncoding.encode(.dictionary(offer.map { ["clipboard": $0.propertyList] } ?? [:]))
        case .clipboardOpen(let id, let type):
            out += PropertyBinaryEncoding.encode(.dictionary(["id": .string(id.rawValue), "type": .string(type)]))
        case .forgetHistory(let ids):
            out += PropertyBinaryEncoding.encode(.dictionary(ids.map { ["persistentIdentifiers": .array($0.map(PropertyValue.string))] } ?? ["all": .boolean(true)]))
        case .stream(let frame):
            var buffer = ByteBuffer()
            if let payload = frame.encode(header: &buffer) { buffer.writeImmutableBuffer(payload) }
            return Array(buffer.readableBytesView.dropFirst(4))
        }
        return out
    }

    /// Decodes one frame's content. Unknown message types are an error: version 1 has no
    /// optional messages (a later version negotiates them in the hello).
    public static func decode(_ bytes: [UInt8]) throws(PeerProtocolError) -> PeerMessage {
        guard let type = bytes.first else { throw .malformed("empty frame") }
        var body = Array(bytes.dropFirst())
        if type == 0x01 {
            guard body.count >= 8, Array(body[0..<4]) == PeerHello.magic else { throw .notHandoff }
            let version = UInt16(body[4]) << 8 | UInt16(body[5])
            let minimum = UInt16(body[6]) << 8 | UInt16(body[7])
            body.removeFirst(8)
            let d = try dictionary(body)
            guard case .string(let name)? = d["deviceName"] else { throw .malformed("hello without deviceName") }
            var purpose = PeerHello.Purpose.link
            if let p = d["purpose"] {
                guard case .string(let text) = p, let known = PeerHello.Purpose(rawValue: text) else {
                    throw .malformed("hello with an unknown purpose")
                }
                purpose = known
            }
            var port: UInt16?
            if let p = d["listenPort"] {
                guard case .integer(let n) = p, let valid = UInt16(exactly: n), valid > 0 else { throw .malformed("hello with a bad listenPort") }
                port = valid
            }
            var time: Timestamp?
            if let t = d["time"] {
                guard case .date(let when) = t else { throw .malformed("hello with a time that is not a date") }
                time = when
            }
            var instance: String?
            if let i = d["instance"] {
                guard case .string(let text) = i, !text.isEmpty, text.utf8.count <= PeerHello.maximumInstanceBytes else {
                    throw .malformed("hello with an instance that is not a name of 1 to \(PeerHello.maximumInstanceBytes) bytes")
                }
                instance = text
            }
            return .hello(PeerHello(version: version, minimumVersion: minimum, deviceName: name, purpose: purpose, listenPort: port, time: time,
                                    instance: instance))
        }
        if StreamFrame.isPeerStreamType(type) {
            var buffer = ByteBuffer()
            buffer.writeBytes(body)
            return .stream(try StreamFrame.decode(type: type, body: buffer))
        }
        let d = try dictionary(body)
        func string(_ k: String) throws(PeerProtocolError) -> String {
            guard case .string(let s)? = d[k] else { throw .malformed("message 0x\(String(type, radix: 16)) lacks \(k)") }
            return s
        }
        func activityID(_ k: String) throws(PeerProtocolError) -> ActivityID {
            guard let id = ActivityID(try string(k)) else { throw .malformed("\(k) is not an activity id") }
            return id
        }
        func requestID() throws(PeerProtocolError) -> UInt64 {
            guard case .integer(let i)? = d["requestID"] else { throw .malformed("message lacks requestID") }
            return UInt64(bitPattern: i)
        }
        switch type {
        case 0x02:
            return .subscribe
        case 0x03:
            guard let s = d["activity"] else { return .offer(nil) }
            do { return .offer(try ActivitySummary(propertyList: s)) } catch { throw .malformed("offer: \(error)") }
        case 0x04:
            return .fetch(requestID: try requestID(), activityID: try activityID("activityID"))
        case 0x05:
            let r = try requestID()
            if let a = d["activity"] {
                let activity: Activity
                do { activity = try ActivityPropertyList.decode(a) } catch { throw .malformed("fetched activity: \(error)") }
                guard case .boolean(let stale)? = d["stale"] else { throw .malformed("fetched activity lacks stale") }
                return .fetched(requestID: r, .activity(activity, stale: stale))
            }
            return .fetched(requestID: r, .failure(code: try string("errorCode"), message: try string("errorMessage")))
        case 0x06:
            return .continued(activityID: try activityID("activityID"))
        case 0x07:
            return .error(code: try string("code"), message: try string("message"))
        case 0x08:
            var document = false
            if let v = d["document"] {
                guard case .boolean(let b) = v else { throw .malformed("streamOpen with a document that is not a boolean") }
                document = b
            }
            return .streamOpen(activityID: try activityID("activityID"), document: document)
        case 0x09:
            guard let l = d["length"] else { return .streamAccepted(length: nil) }
            guard case .integer(let n) = l, n >= 0 else { throw .malformed("streamAccepted with a bad length") }
            return .streamAccepted(length: n)
        case 0x0A:
            guard case .data(let c)? = d["commitment"], c.count == 32 else { throw .malformed("pairCommit needs a 32-byte commitment") }
            return .pairCommit(c)
        case 0x0B:
            guard case .data(let n)? = d["nonce"], n.count == 32 else { throw .malformed("pairNonce needs a 32-byte nonce") }
            return .pairNonce(n)
        case 0x0C:
            return .pairConfirm
        case 0x0E:
            guard case .integer(let g)? = d["generation"], g >= 0, case .data(let key)? = d["key"], key.count == 32 else {
                throw .malformed("advertisementKey needs a generation and a 32-byte key")
            }
            return .advertisementKey(generation: UInt64(g), key: key)
        case 0x0D:
            guard case .array(let items)? = d["statements"], items.count <= 1024 else { throw .malformed("account needs statements (1024 at most)") }
            var out: [[UInt8]] = []
            for item in items {
                guard case .data(let bytes) = item else { throw .malformed("an account statement is data") }
                out.append(bytes)
            }
            return .account(out)
        case 0x0F:
            guard case .array(let list)? = d["index"], list.count <= PeerMessage.maximumKeptItems else {
                throw .malformed("keptIndex needs an index (\(PeerMessage.maximumKeptItems) entries at most)")
            }
            var out: [PeerMessage.KeptIndexEntry] = []
            for entry in list {
                guard case .dictionary(let e) = entry, case .data(let origin)? = e["origin"], origin.count == 32,
                      case .integer(let sequence)? = e["sequence"] else {
                    throw .malformed("a keptIndex entry needs a 32-byte origin and a sequence")
                }
                out.append(.init(origin: origin, sequence: UInt64(bitPattern: sequence)))
            }
            return .keptIndex(out)
        case 0x15:
            guard case .array(let items)? = d["items"], items.count <= PeerMessage.maximumKeptItems else {
                throw .malformed("kept needs items (\(PeerMessage.maximumKeptItems) at most)")
            }
            var out: [[UInt8]] = []
            for item in items {
                guard case .data(let bytes) = item else { throw .malformed("a kept offer is data") }
                out.append(bytes)
            }
            return .kept(out)
        case 0x16:
            guard let c = d["clipboard"] else { return .clipboard(nil) }
            do { return .clipboard(try ClipboardOffer(propertyList: c)) } catch { throw .malformed("clipboard: \(error)") }
        case 0x17:
            guard let id = ClipboardID(try string("id")) else { throw .malformed("clipboardOpen's id is not 32 hex digits") }
            let type = try string("type")
            guard ClipboardFormat.isValidType(type) else { throw .malformed("clipboardOpen's type is not a MIME type") }
            return .clipboardOpen(id: id, type: type)
        case 0x18:
            if case .boolean(true)? = d["all"], d["persistentIdentifiers"] == nil { return .forgetHistory(persistentIdentifiers: nil) }
            guard case .array(let list)? = d["persistentIdentifiers"], d["all"] == nil, !list.isEmpty, list.count <= PeerMessage.maximumForgotten else {
                throw .malformed("forgetHistory needs persistentIdentifiers (1 to \(PeerMessage.maximumForgotten)) or all, not both")
            }
            var ids: [String] = []
            for item in list {
                guard case .string(let s) = item, SearchFields.isPersistentIdentifier(s) else {
                    throw .malformed("forgetHistory's persistent identifiers are strings of 1 to 256 bytes without control characters")
                }
                ids.append(s)
            }
            return .forgetHistory(persistentIdentifiers: ids)
        default:
            throw .malformed("unknown message type 0x\(String(type, radix: 16))")
        }
    }

    static func dictionary(_ bytes: [UInt8]) throws(PeerProtocolError) -> [String: PropertyValue] {
        let value: PropertyValue
        do { value = try PropertyBinaryEncoding.decode(bytes) } catch { throw .malformed("\(error)") }
        guard case .dictionary(let d) = value else { throw .malformed("a message body must be a dictionary") }
        return d
    }
}
