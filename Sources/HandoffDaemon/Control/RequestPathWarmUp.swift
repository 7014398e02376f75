import Dispatch
import HandoffSystem
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
            if answered > 0 {
                logger.debug("request path mapped back", metadata: ["requests": "\(answered)"])
            } else {
                logger.debug("the request path could not be mapped back: no answer from the control socket", metadata: ["socket": "\(socketPath)"])
            }
        }
    }

    /// One `GET` with `Connection: close`, its answer read to the end and dropped; true
    /// when the answer was a 200.
    static func request(_ target: String, socketPath: String) -> Bool {
        guard let fd = try? UnixSocket.connect(to: socketPath, timeout: 5) else { return false }
        defer { close(fd) }
        let text = Array("GET \(target) HTTP/1.1\r\nHost: handoffd\r\nConnection: close\r\n\r\n".utf8)
        let sent = text.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == text.count else { return false }
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            if head.count < 16 { head += buffer[0..<min(n, 16 - head.count)] }
        }
        return head.starts(with: Array("HTTP/1.1 200".utf8))
    }
}
