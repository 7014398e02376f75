import HandoffCore

/// What opening a continued activity on this workstation did (Docs/LocalAPI.md §16):
/// which app got it and how, or why nothing was opened.
public enum LaunchOutcome: Sendable, Equatable {
    case opened(LaunchedApp)
    case failed(code: String, message: String)

    public var json: JSONValue {
        switch self {
        case .opened(let app): .object(["opened": app.json])
        case .failed(let code, let message): .object(["error": .object(["code": .string(code), "message": .string(message)])])
        }
    }

    /// Strict: an answer from the session agent that is neither shape is refused.
    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "body", problem: "is not an object") }
        if let opened = o["opened"] {
            self = .opened(try LaunchedApp(json: opened))
        } else if let e = o["error"]?.objectValue, let code = e["code"]?.stringValue, let message = e["message"]?.stringValue {
            self = .failed(code: code, message: message)
        } else {
            throw ValidationError(field: "body", problem: "needs \"opened\" or \"error\": {\"code\", \"message\"}")
        }
    }
}

/// The app a continued activity was opened in.
public struct LaunchedApp: Sendable, Equatable {
    /// Why this app: it declares the activity type, it claims the web page's domain, it
    /// is the default browser (web fallback), or it opens the activity's document.
    public enum Route: String, Sendable {
        case handler, domain, browser, document
        /// A terminal emulator running the ssh command of a continued terminal.
        case terminal
    }

    public var route: Route
    /// The desktop id (`org.example.Editor.desktop`), when the app has one.
    public var appID: String?
    public var appName: String
    /// What the app was given: a `handoff:` URI, the web page, or a file URI.
    public var uri: String?
    /// Anything the user should know (e.g. "a copy fetched from desk").
    public var note: String?

    public init(route: Route, appID: String?, appName: String, uri: String?, note: String? = nil) {
        self.route = route
        self.appID = appID
        self.appName = appName
        self.uri = uri
        self.note = note
    }

    public var json: JSONValue {
        .object([
            "route": .string(route.rawValue), "app": .object(["id": appID.map(JSONValue.string) ?? .null, "name": .string(appName)]),
            "uri": uri.map(JSONValue.string) ?? .null, "note": note.map(JSONValue.string) ?? .null,
        ])
    }

    public init(json: JSONValue) throws(ValidationError) {
        guard let o = json.objectValue else { throw ValidationError(field: "opened", problem: "is not an object") }
        guard let r = o["route"]?.stringValue, let route = Route(rawValue: r) else {
            throw ValidationError(field: "opened.route", problem: "must be handler, domain, browser, document or terminal")
        }
        let app = o["app"]?.objectValue
        guard let name = app?["name"]?.stringValue else { throw ValidationError(field: "opened.app.name", problem: "missing") }
        self.route = route
        appID = app?["id"]?.stringValue
        appName = name
        uri = o["uri"]?.stringValue
        note = o["note"]?.stringValue
    }
}
