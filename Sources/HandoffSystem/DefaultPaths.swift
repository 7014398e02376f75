#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where handoffd keeps its socket, state and configuration (XDG base directories),
/// shared by the daemon and its clients so both agree without configuration.
public enum DefaultPaths {
    static func env(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }

    static var home: String { env("HOME") ?? "/" }
    public static var homeDirectory: String { home }
    /// `$XDG_STATE_HOME` and `$XDG_CONFIG_HOME` as set (nil: the defaults apply).
    public static var stateHome: String? { env("XDG_STATE_HOME") }
    public static var configHome: String? { env("XDG_CONFIG_HOME") }

    /// `$XDG_RUNTIME_DIR`, else `/run/user/UID` when it exists, else `/tmp/handoff-UID`.
    public static var runtimeDirectory: String {
        if let d = env("XDG_RUNTIME_DIR") { return d }
        let run = "/run/user/\(getuid())"
        if access(run, W_OK) == 0 { return run }
        return "/tmp/handoff-\(getuid())"
    }

    /// `$HANDOFF_SOCKET`, else `$XDG_RUNTIME_DIR/handoff/handoffd.sock`.
    public static var socket: String {
        env("HANDOFF_SOCKET") ?? runtimeDirectory + "/handoff/handoffd.sock"
    }

    /// `$XDG_STATE_HOME/handoff`, by default `~/.local/state/handoff`.
    public static var stateDirectory: String {
        (env("XDG_STATE_HOME") ?? home + "/.local/state") + "/handoff"
    }

    /// `$XDG_CONFIG_HOME/handoff/handoffd.conf`, by default `~/.config/handoff/handoffd.conf`.
    public static var configFile: String {
        (env("XDG_CONFIG_HOME") ?? home + "/.config") + "/handoff/handoffd.conf"
    }

    /// The session agent's: `$XDG_CONFIG_HOME/handoff/handoff-session.conf`.
    public static var sessionConfigFile: String {
        (env("XDG_CONFIG_HOME") ?? home + "/.config") + "/handoff/handoff-session.conf"
    }

    /// `$XDG_CACHE_HOME`, by default `~/.cache`.
    public static var cacheDirectory: String { env("XDG_CACHE_HOME") ?? home + "/.cache" }

    /// `$XDG_DATA_HOME`, by default `~/.local/share`.
    public static var dataHome: String { env("XDG_DATA_HOME") ?? home + "/.local/share" }

    /// `$XDG_DATA_HOME/applications`, by default `~/.local/share/applications`.
    public static var userApplications: String {
        (env("XDG_DATA_HOME") ?? home + "/.local/share") + "/applications"
    }
}
