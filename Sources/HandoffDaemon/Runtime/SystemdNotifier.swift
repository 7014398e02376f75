import CHandoffSystem
#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: tells a Type=notify unit's manager we are ready or stopping.
enum SystemdNotifier {
    static func notify(_ message: String) {
        guard let socketPath = getenv("NOTIFY_SOCKET") else { return }
        _ = handoff_sd_notify(socketPath, message)
    }
}
