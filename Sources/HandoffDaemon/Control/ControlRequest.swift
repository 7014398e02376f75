import HandoffCore
import HandoffControlAPI
import NIOHTTP1

/// One HTTP request to the control API, body complete. The HTTP layer builds it; the
/// router never sees bytes on a socket.
struct ControlRequest: Sendable {
    var method: HTTPMethod
    var path: String
    var headers: HTTPHeaders
    var body: [UInt8]

    init(head: HTTPRequestHead, body: [UInt8]) {
        method = head.method
        path = String(head.uri.prefix { $0 != "?" && $0 != "#" })
        headers = head.headers
        self.body = body
    }

    /// The body as a JSON object; an empty body reads as `{}`.
    func jsonObject() throws(HandoffError) -> JSONObject {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return JSONObject() }
        let value: JSONValue
        do { value = try JSONValue(parsing: body) } catch { throw HandoffError.invalidJSON(error) }
        guard case .object(let o) = value else {
            throw HandoffError.badRequest("the request body must be a JSON object, not \(value.typeName)")
        }
        return o
    }
}

struct ControlResponse: Sendable {
    var status: Int
    var body: JSONValue
    /// Sent as the `Handoff-Warning` header.
    var warning: String?

    func warning(_ text: String?) -> ControlResponse {
        var r = self
        r.warning = text
        return r
    }

    static func ok(_ body: JSONValue) -> ControlResponse { ControlResponse(status: 200, body: body) }
    static func created(_ body: JSONValue) -> ControlResponse { ControlResponse(status: 201, body: body) }
    static func error(_ e: APIError) -> ControlResponse { ControlResponse(status: e.status, body: e.json) }
    /// The one place a domain failure becomes an HTTP status.
    static func error(_ e: HandoffError) -> ControlResponse { .error(APIError(e)) }
}
