import HandoffCore

extension HandoffError {
    static func unknownActivity(_ id: String) -> HandoffError {
        HandoffError.notFound("no activity \(id) on this device (see GET /v1/activities)")
    }
}
