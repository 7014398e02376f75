import HandoffCore

/// The account's newest copy as the local API shows it (`GET /v1/clipboard`, the
/// `clipboard` event): its formats and where it was copied, never its bytes.
public struct ClipboardRecord: Sendable, Equatable {
    public var id: ClipboardID
    public var formats: [ClipboardFormat]
    /// The workstation it was copied on (this one when `local`).
    public var device: PeerDevice
    public var local: Bool
    /// When it was copied and until when it may be pasted, on this workstation's clock.
    public var copiedAt: Timestamp
    public var expiresAt: Timestamp

    public init(id: ClipboardID, formats: [ClipboardFormat], device: PeerDevice, local: Bool, copiedAt: Timestamp, expiresAt: Timestamp) {
        self.id = id
        self.formats = formats
        self.device = device
        self.local = local
        self.copiedAt = copiedAt
        self.expiresAt = expiresAt
    }

    public var json: JSONValue {
        .object([
            "id": .string(id.rawValue),
            "formats": ClipboardFormats.json(formats),
            "device": device.json, "local": .bool(local),
            "copiedAt": .string(copiedAt.rfc3339), "expiresAt": .string(expiresAt.rfc3339),
        ])
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "clipboard", problem: "must be an object") }
        var r = JSONFieldReader(o, path: "clipboard")
        guard let id = ClipboardID(try r.requiredString("id")) else { throw ValidationError(field: "clipboard.id", problem: "is not 32 hex digits") }
        self.id = id
        formats = try ClipboardFormats.read(r.value("formats"), field: "clipboard.formats")
        device = PeerDevice(json: r.value("device"))
        local = try r.bool("local") ?? false
        copiedAt = try r.timestamp("copiedAt") ?? Timestamp(seconds: 0)
        expiresAt = try r.timestamp("expiresAt") ?? copiedAt
    }

    /// `{"clipboard": record or null}`: the body of `GET /v1/clipboard`, `DELETE`, and the event.
    public static func newestJSON(_ record: ClipboardRecord?) -> JSONValue { .object(["clipboard": record?.json ?? .null]) }

    public static func newest(json: JSONValue) throws(ValidationError) -> ClipboardRecord? {
        guard let o = json.objectValue, let v = o["clipboard"] else { throw ValidationError(field: "clipboard", problem: "is required") }
        return v == .null ? nil : try ClipboardRecord(json: v)
    }
}

/// `[{"type", "size"}, ...]` in requests and records; `size` null (or left out) when unknown.
enum ClipboardFormats {
    static func json(_ formats: [ClipboardFormat]) -> JSONValue {
        .array(formats.map { .object(["type": .string($0.type), "size": $0.size.map(JSONValue.integer) ?? .null]) })
    }

    static func read(_ value: JSONValue?, field: String) throws(ValidationError) -> [ClipboardFormat] {
        guard case .array(let items)? = value else { throw ValidationError(field: field, problem: "must be an array of {\"type\", \"size\"}") }
        guard items.count <= ClipboardOffer.maximumFormats else {
            throw ValidationError(field: field, problem: "\(items.count) formats; at most \(ClipboardOffer.maximumFormats)")
        }
        var out: [ClipboardFormat] = []
        for (i, item) in items.enumerated() {
            guard let o = item.objectValue else { throw ValidationError(field: "\(field)[\(i)]", problem: "must be an object {\"type\", \"size\"}") }
            var r = JSONFieldReader(o, path: "\(field)[\(i)]")
            let type = try r.requiredString("type")
            let size = try r.integer("size")
            try r.rejectUnknownFields()
            out.append(ClipboardFormat(type: type, size: size))
        }
        return out
    }
}

/// `DELETE /v1/clipboard`: withdraws this workstation's copy; with `id`, only that copy
/// (a copy made since, by another app or handoffctl, stays).
public struct WithdrawClipboardRequest: Sendable, Equatable {
    public var id: ClipboardID?

    public init(id: ClipboardID? = nil) { self.id = id }

    public var json: JSONValue { .object(id.map { ["id": .string($0.rawValue)] } ?? [:]) }

    public init(body: JSONObject) throws(HandoffError) {
        id = try RequestBody.read(body) { r throws(ValidationError) -> ClipboardID? in
            guard let text = try r.string("id") else { return nil }
            guard let id = ClipboardID(text) else { throw ValidationError(field: "body.id", problem: "is not 32 hex digits") }
            return id
        }
    }
}

/// `POST /v1/clipboard`: an app (the session agent, for the desktop's clipboard) says it
/// copied something it will serve when a paste asks: the formats, never the bytes. The
/// session (body or `Handoff-Session`) answers `clipboard-requested`.
public struct AnnounceClipboardRequest: Sendable, Equatable {
    public var formats: [ClipboardFormat]
    public var session: String?

    public init(formats: [ClipboardFormat], session: String? = nil) {
        self.formats = formats
        self.session = session
    }

    public var json: JSONValue {
        var o: JSONObject = ["formats": ClipboardFormats.json(formats)]
        if let session { o["session"] = .string(session) }
        return .object(o)
    }

    public init(body: JSONObject) throws(HandoffError) {
        (formats, session) = try RequestBody.read(body) { r throws(ValidationError) in
            (try ClipboardFormats.read(r.value("formats"), field: "body.formats"), try r.string("session"))
        }
        do { try ClipboardOffer.validate(formats) } catch { throw .badRequest(error.description) }
    }
}
