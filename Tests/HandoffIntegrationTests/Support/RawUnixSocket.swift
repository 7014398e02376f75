import Foundation
import HandoffTestSupport

/// A plain blocking Unix stream socket, for sending a daemon exactly the bytes a test
/// wants (garbage, half requests) and reading what comes back.
final class RawUnixSocket: @unchecked Sendable {
    private(set) var fd: Int32

    init(path: String) throws {
        // Close-on-exec: a process another test spawns meanwhile must not inherit it, or
        // closing it here would not close the connection (the child still holds it).
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        var addr = unixAddress(path)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let e = errno
            // A fully initialised class runs deinit when its init throws: mark the
            // descriptor closed, or deinit closes the same number again, by then
            // perhaps another thread's new socket (NIO crashed with EBADF on it).
            Glibc.close(fd)
            fd = -1
            throw TestFailure("connect \(path): errno \(e)")
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestFailure("send failed: errno \(errno)") }
            off += n
        }
    }

    /// Reads until the peer closes or `timeout` passes; returns what arrived and whether it closed.
    func readUntilClosed(timeout: Double) async -> (data: [UInt8], closed: Bool) {
        await offPool { self.blockingReadUntilClosed(timeout: timeout) }
    }

    /// Reads one HTTP response with a Content-Length body.
    func readResponse(timeout: Double = 5) async throws -> (status: Int, body: String) {
        try await offPool { try self.blockingReadResponse(timeout: timeout) }
    }

    private func blockingReadUntilClosed(timeout: Double) -> (data: [UInt8], closed: Bool) {
        var out: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buf = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard poll(&pfd, 1, ms) > 0 else { continue }
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n <= 0 { return (out, true) }
            out += buf[0..<n]
        }
        return (out, false)
    }

    private func blockingReadResponse(timeout: Double) throws -> (status: Int, body: String) {
        var data: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buf = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            let text = String(decoding: data, as: UTF8.self)
            if let headEnd = text.range(of: "\r\n\r\n") {
                let head = String(text[..<headEnd.lowerBound])
                let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                let body = Array(text[headEnd.upperBound...].utf8)
                if body.count >= length { return (status, String(decoding: body.prefix(length), as: UTF8.self)) }
            }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n <= 0 { break }
            data += buf[0..<n]
        }
        throw TestFailure("no complete HTTP response; got: \(String(decoding: data, as: UTF8.self))")
    }

    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    deinit { close() }
}

/// A Unix socket's address for `path`, which the caller keeps under 108 bytes.
func unixAddress(_ path: String) -> sockaddr_un {
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in
        for (i, b) in bytes.enumerated() where i < raw.count - 1 { raw[i] = b }
    }
    return addr
}
