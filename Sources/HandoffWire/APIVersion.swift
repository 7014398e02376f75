/// The control API's version lives in its paths (`/v1/...`); a breaking change gets `/v2`.
public enum APIVersion {
    public static let current = "v1"
    public static let pathPrefix = "/v1"
    /// The software's version, reported by `/v1/status` and `--version`.
    public static let software = "0.1.0"
}
