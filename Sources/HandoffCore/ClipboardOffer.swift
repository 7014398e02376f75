/// A copy announced to the account: its id and the formats it can be pasted in, never
/// its bytes. Those stay on the workstation it was copied on until a paste asks for one
/// format (Docs/PeerProtocol.md §19).
///
/// Times travel as durations, not dates: how long ago it was copied and how long it may
/// still be pasted. Two workstations' clocks may disagree; a duration does not care.
public struct ClipboardOffer: Sendable, Equatable {
    public var id: ClipboardID
    /// In the copying app's order of preference; at most `maximumFormats`, types unique.
    public var formats: [ClipboardFormat]
    /// Milliseconds since the copy, when the offer was sent.
    public var ageMilliseconds: Int64
    /// Milliseconds it may still be pasted, from when the offer was sent.
    public var remainingMilliseconds: Int64
    /// Formats a decoder left out (malformed, repeated, beyond the cap), for the log; never
    /// encoded, and not part of what the offer is.
    public var droppedFormats: Int = 0

    /// More formats than any clipboard owner offers (a browser's copy has about ten).
    public static let maximumFormats = 32
    /// A format list on the wire longer than this is malformed rather than capped.
    public static let maximumFormatsOnWire = 4096

    public init(id: ClipboardID, formats: [ClipboardFormat], ageMilliseconds: Int64 = 0, remainingMilliseconds: Int64) {
        self.id = id
        self.formats = formats
        self.ageMilliseconds = ageMilliseconds
        self.remainingMilliseconds = remainingMilliseconds
    }

    public static func == (a: ClipboardOffer, b: ClipboardOffer) -> Bool {
        a.id == b.id && a.formats == b.formats && a.ageMilliseconds == b.ageMilliseconds && a.remainingMilliseconds == b.remainingMilliseconds
    }

    public func format(_ type: String) -> ClipboardFormat? { formats.first { $0.type == type } }

    /// Checks formats given by this workstation's own apps: every type valid, none twice,
    /// sizes not negative, at least one and at most `maximumFormats`.
    public static func validate(_ formats: [ClipboardFormat]) throws(ValidationError) {
        guard !formats.isEmpty else { throw ValidationError(field: "formats", problem: "name at least one format") }
        guard formats.count <= maximumFormats else {
            throw ValidationError(field: "formats", problem: "\(formats.count) formats; at most \(maximumFormats)")
        }
        var seen = Set<String>()
        for (i, f) in formats.enumerated() {
            guard isValidType(f.type) else {
                throw ValidationError(field: "formats[\(i)].type", problem: "\"\(f.type.prefix(80))\" is not a MIME type such as text/plain;charset=utf-8")
            }
            guard seen.insert(f.type).inserted else { throw ValidationError(field: "formats[\(i)].type", problem: "\(f.type) is named twice") }
            guard (f.size ?? 0) >= 0 else { throw ValidationError(field: "formats[\(i)].size", problem: "must not be negative") }
        }
    }

    static func isValidType(_ s: String) -> Bool { ClipboardFormat.isValidType(s) }

    public var propertyList: PropertyValue {
        .dictionary([
            "id": .string(id.rawValue),
            "formats": .array(formats.map { f in .dictionary(f.size.map { ["type": .string(f.type), "size": .integer($0)] } ?? ["type": .string(f.type)]) }),
            "age": .integer(ageMilliseconds),
            "remaining": .integer(remainingMilliseconds),
        ])
    }

    /// From a peer. The offer's own fields must be right; its formats are taken leniently:
    /// what is malformed, repeated or beyond `maximumFormats` is left out and counted in
    /// `droppedFormats`, so one odd type does not lose the whole copy. An offer left
    /// without any format is malformed.
    public init(propertyList value: PropertyValue) throws(ValidationError) {
        guard case .dictionary(let d) = value else { throw ValidationError(field: "clipboard", problem: "is not a dictionary") }
        guard case .string(let text)? = d["id"], let id = ClipboardID(text) else {
            throw ValidationError(field: "clipboard.id", problem: "missing or not 32 hex digits")
        }
        guard case .integer(let age)? = d["age"], age >= 0 else { throw ValidationError(field: "clipboard.age", problem: "missing or negative") }
        guard case .integer(let remaining)? = d["remaining"], remaining >= 0 else {
            throw ValidationError(field: "clipboard.remaining", problem: "missing or negative")
        }
        guard case .array(let list)? = d["formats"], list.count <= Self.maximumFormatsOnWire else {
            throw ValidationError(field: "clipboard.formats", problem: "missing, or more than \(Self.maximumFormatsOnWire)")
        }
        var formats: [ClipboardFormat] = []
        var seen = Set<String>()
        var dropped = 0
        for item in list {
            guard formats.count < Self.maximumFormats, case .dictionary(let f) = item, case .string(let type)? = f["type"],
                  Self.isValidType(type), !seen.contains(type) else {
                dropped += 1
                continue
            }
            var size: Int64?
            if let s = f["size"] {
                guard case .integer(let n) = s, n >= 0 else {
                    dropped += 1
                    continue
                }
                size = n
            }
            seen.insert(type)
            formats.append(ClipboardFormat(type: type, size: size))
        }
        guard !formats.isEmpty else { throw ValidationError(field: "clipboard.formats", problem: "no well-formed format") }
        self.init(id: id, formats: formats, ageMilliseconds: age, remainingMilliseconds: remaining)
        droppedFormats = dropped
    }
}
