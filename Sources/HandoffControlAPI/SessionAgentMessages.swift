import HandoffCore

/// `POST /v1/launcher`: the event session (else the `Handoff-Session` header) that takes
/// the launcher role.
public struct ClaimLauncherRequest: Sendable, Equatable {
    public var session: String?

    public init(session: String?) { self.session = session }

    public var json: JSONValue { .object(session.map { ["session": .string($0)] } ?? [:]) }

    public init(body: JSONObject) throws(HandoffError) {
        session = try RequestBody.read(body) { r throws(ValidationError) in try r.string("session") }
    }
}

/// `POST /v1/sources/{name}`: turn a desktop source on or off.
public struct SetSourceRequest: Sendable, Equatable {
    public var enabled: Bool

    public init(enabled: Bool) { self.enabled = enabled }

    public var json: JSONValue { .object(["enabled": .bool(enabled)]) }

    public init(body: JSONObject) throws(HandoffError) {
        guard let enabled = try RequestBody.read(body, { r throws(ValidationError) in try r.bool("enabled") }) else {
            throw .badRequest("say {\"enabled\": true} or {\"enabled\": false}")
        }
        self.enabled = enabled
    }
}

/// `POST /v1/source-answers/{requestID}`: the session agent's answer to `sources-requested`,
/// the sources after the change, or why it failed.
public struct SourcesAnswer: Sendable, Equatable {
    public var result: Result<[DesktopSource], SourceChangeError>

    public init(_ result: Result<[DesktopSource], SourceChangeError>) { self.result = result }

    public var json: JSONValue {
        switch result {
        case .success(let list): DesktopSource.listJSON(list)
        case .failure(let e): .object(["error": .object(["code": .string(e.code), "message": .string(e.message)])])
        }
    }

    /// An error's code and message are cut to 64 and 4,096 characters: they are passed on.
    public init(body: JSONObject) throws(HandoffError) {
        if let e = body["error"]?.objectValue {
            guard let code = e["code"]?.stringValue, let message = e["message"]?.stringValue else {
                throw .badRequest("an error answer is {\"error\": {\"code\", \"message\"}}")
            }
            result = .failure(SourceChangeError(code: String(code.prefix(64)), message: String(message.prefix(4096))))
        } else {
            do { result = .success(try DesktopSource.list(json: .object(body))) } catch { throw .badRequest(error.description) }
        }
    }
}
