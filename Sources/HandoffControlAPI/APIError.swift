import HandoffCore

/// The one error shape of the control API: `{"error": {"code": ..., "message": ...}}`,
/// with an HTTP status that fits. Codes are stable strings a program can branch on.
public struct APIError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { message }

    public var json: JSONValue {
        .object(["error": .object(["code": .string(code), "message": .string(message)])])
    }

    /// Reads the error shape back (client side); nil if `body` is not one.
    public init?(status: Int, body: JSONValue) {
        guard case .object(let o)? = body.objectValue?["error"],
              let code = o["code"]?.stringValue, let message = o["message"]?.stringValue
        else { return nil }
        self.init(status: status, code: code, message: message)
    }

    // HTTP-level failures of the local API itself (domain failures are HandoffError).
    public static func tooLarge(_ limit: Int) -> APIError {
        APIError(status: 413, code: "body_too_large", message: "request body exceeds \(limit) bytes; keep activities small and send bulk data through a continuation stream")
    }
    public static func methodNotAllowed(_ method: String, _ path: String) -> APIError {
        APIError(status: 405, code: "method_not_allowed", message: "\(method) is not allowed on \(path)")
    }
}

extension APIError {
    /// The local API's view of a domain failure: the HTTP status for its kind.
    public init(_ e: HandoffError) {
        self.init(status: APIError.status(of: e.kind), code: e.code, message: e.message)
    }

    /// Docs/LocalAPI.md §4: which status each kind of failure gets.
    public static func status(of kind: HandoffError.Kind) -> Int {
        switch kind {
        case .badRequest: 400
        case .forbidden: 403
        case .notFound: 404
        case .conflict: 409
        case .gone: 410
        case .invalid: 422
        case .versionMismatch: 426
        case .internal: 500
        case .storageFull: 507
        case .peerFailed: 502
        case .unavailable: 503
        case .peerTimedOut: 504
        }
    }
}
