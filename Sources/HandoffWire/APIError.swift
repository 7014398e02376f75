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

    // The codes in Docs/LocalAPI.md.
    public static func invalidJSON(_ e: JSONParseError) -> APIError { APIError(status: 400, code: "invalid_json", message: e.description) }
    public static func invalid(_ e: ValidationError) -> APIError { APIError(status: 422, code: "invalid_activity", message: e.description) }
    public static func badRequest(_ m: String) -> APIError { APIError(status: 400, code: "bad_request", message: m) }
    public static func notFound(_ m: String) -> APIError { APIError(status: 404, code: "not_found", message: m) }
    public static func invalidated(_ id: ActivityID) -> APIError {
        APIError(status: 410, code: "invalidated", message: "activity \(id) was invalidated; an invalidated activity is final, make a new one with become-current")
    }
    public static func expired(_ id: ActivityID) -> APIError {
        APIError(status: 410, code: "expired", message: "activity \(id) has expired; make a new one with become-current")
    }
    public static func noCurrent() -> APIError { APIError(status: 404, code: "no_current_activity", message: "no activity is current on this device") }
    public static func tooLarge(_ limit: Int) -> APIError {
        APIError(status: 413, code: "body_too_large", message: "request body exceeds \(limit) bytes; keep activities small and send bulk data through a continuation stream")
    }
    public static func methodNotAllowed(_ method: String, _ path: String) -> APIError {
        APIError(status: 405, code: "method_not_allowed", message: "\(method) is not allowed on \(path)")
    }
    public static func unknownSession(_ token: String) -> APIError {
        APIError(status: 409, code: "unknown_session", message: "session \(token) is not open; open one with GET /v1/events and use the token it sends first")
    }
}
