import CAvahi

/// A failure to set up the Avahi event loop or client.
public struct AvahiError: Error, Sendable, CustomStringConvertible {
    /// Avahi's error code (AVAHI_ERR_*), 0 when the failure is not Avahi's.
    public var code: Int32
    public var message: String

    public var description: String { message }

    init(_ what: String, code: Int32) {
        self.code = code
        self.message = "\(what): \(AvahiError.text(code))"
    }

    init(_ message: String) {
        self.code = 0
        self.message = message
    }

    static func text(_ code: Int32) -> String {
        String(cString: avahi_strerror(code))
    }
}
