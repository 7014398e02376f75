import HandoffCore
import HandoffWire

extension APIError {
    static func unknownActivity(_ id: String) -> APIError {
        APIError.notFound("no activity \(id) on this device (see GET /v1/activities)")
    }
}
