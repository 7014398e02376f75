import Dispatch
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// After the start-up code is handed back (`StartupCodeRelease`), two requests to
/// handoffd's own control socket map back the code that serving a request runs (the
/// accept, the HTTP codec, the router, the registry, JSON), so that the first
/// `handoffctl` after hours of idle is not the one that reads it back from disk. The
/// pages they bring back are the ones any use brings back anyway: the idle figure of a
/// daemon that has answered a request (Docs/Performance.md, "The first request after
/// idle"). Errors are ignored: this changes only how soon a page is resident.
enum RequestPathWarmUp {
    static let targets = ["/v1/status", "/v1/activities"]

    static func run(socketPath: String, logger: Logger) {
        DispatchQueue.global(qos: .utility).async {
            let answered = targets.filter { request($0, socketPath: socketPath) }.count
            logger.debug("request path mapped back", metadata: ["requests": "\(answered)"])
        }
    }

    /// One `GET` with `Connection: close`, its answer read to the end and dropped.
    static func request(_ target: String, socketPath: String) -> Bool {
        guard let fd = ControlListener.connection(to: socketPath) else { return false }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let text = Array("GET \(target) HTTP/1.1\r\nHost: handoffd\r\nConnection: close\r\n\r\n".utf8)
        let sent = text.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == text.count else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            total += n
        }
        return total > 0
    }
}
