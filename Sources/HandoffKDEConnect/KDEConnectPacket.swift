import HandoffCore

/// One KDE Connect packet: compact JSON on one line, `{"id", "type", "body"[, "payloadSize",
/// "payloadTransferInfo": {"port"}]}` (kdeconnect-kde core/networkpacket.cpp). The `id` is a
/// millisecond time KDE never reads back: a string in 22.12, a number since; either is taken.
public struct KDEConnectPacket: Sendable, Equatable {
    public var type: String
    public var body: JSONObject
    /// A payload that follows on its own connection: its size and the port the sender
    /// listens on for it.
    public var payload: Payload?

    public struct Payload: Sendable, Equatable {
        public var size: Int64
        public var port: Int

        public init(size: Int64, port: Int) {
            self.size = size
            self.port = port
        }
    }

    public init(type: String, body: JSONObject = JSONObject(), payload: Payload? = nil) {
        self.type = type
        self.body = body
        self.payload = payload
    }

    public static let identity = "kdeconnect.identity"
    public static let pair = "kdeconnect.pair"

    /// Reads one line (without its newline), at most `limit` bytes. Everything a peer could
    /// get wrong is a `KDEConnectError`: not JSON, not an object, no type or not a
    /// `kdeconnect.` one, a body that is not an object, a payload without a size or a port
    /// in KDE Connect's range.
    public static func decode(_ line: some Collection<UInt8>, limit: Int) throws(KDEConnectError) -> KDEConnectPacket {
        guard line.count <= limit else { throw KDEConnectError("a packet of \(line.count) bytes, over the \(limit) allowed") }
        let value: JSONValue
        do { value = try JSONValue(parsing: Array(line)) } catch { throw KDEConnectError("a packet that is not JSON: \(error)") }
        guard let object = value.objectValue else { throw KDEConnectError("a packet that is not a JSON object") }
        guard let type = object["type"]?.stringValue, type.hasPrefix("kdeconnect."), type.utf8.count <= 128 else {
            throw KDEConnectError("a packet without a kdeconnect. type")
        }
        var body = JSONObject()
        switch object["body"] {
        case nil, .null?: break
        case .object(let o)?: body = o
        default: throw KDEConnectError("\(type): a body that is not an object")
        }
        var payload: Payload?
        if let size = object["payloadSize"], size != .integer(0), size != .null {
            // KDE sends -1 for a size it does not know: nothing here reads such a payload.
            guard case .integer(let bytes) = size, bytes > 0 else { throw KDEConnectError("\(type): a payload size that is not a positive integer") }
            guard case .integer(let port)? = object["payloadTransferInfo"]?.objectValue?["port"],
                  KDEConnectLimits.ports.contains(Int(clamping: port)) else {
                throw KDEConnectError("\(type): a payload without a port in \(KDEConnectLimits.ports)")
            }
            payload = Payload(size: bytes, port: Int(port))
        }
        return KDEConnectPacket(type: type, body: body, payload: payload)
    }

    /// The packet as KDE writes it: compact JSON and a newline. `id` is the time in ms.
    public func encoded(id: Int64) -> [UInt8] {
        var object: JSONObject = ["id": .integer(id), "type": .string(type), "body": .object(body)]
        if let payload {
            object["payloadSize"] = .integer(payload.size)
            object["payloadTransferInfo"] = .object(["port": .integer(Int64(payload.port))])
        }
        return JSONValue.object(object).serializedBytes() + [UInt8(ascii: "\n")]
    }
}
