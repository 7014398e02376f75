import CHandoffVersion

/// The control API's version lives in its paths (`/v1/...`); a breaking change gets `/v2`.
public enum APIVersion {
    public static let current = "v1"
    public static let pathPrefix = "/v1"
    /// The software's version, reported by `/v1/status`, `--version` and the Debian package
    /// (scripts/package reads it from the built handoffctl). Set once, in Package.swift.
    public static let software = String(cString: handoff_software_version())
}
