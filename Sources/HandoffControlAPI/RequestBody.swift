import HandoffCore

/// Reads a request body's fields strictly: a missing, mistyped or unknown field is
/// `400 bad_request` naming it (`body.deviceID: is required`), before anything happens.
enum RequestBody {
    static func read<T>(_ body: JSONObject, _ fields: (inout JSONFieldReader) throws(ValidationError) -> T) throws(HandoffError) -> T {
        var r = JSONFieldReader(body, path: "body")
        do {
            let value = try fields(&r)
            try r.rejectUnknownFields()
            return value
        } catch {
            throw .badRequest(error.description)
        }
    }
}
