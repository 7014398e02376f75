import HandoffCore
import HandoffControlAPI
import HandoffSystem
#if canImport(Glibc)
import Glibc
#endif

extension HandoffClient {
    /// Origin side: takes the stream a `stream-requested` event asked for, and lets
    /// handoffd move its bytes itself (LocalAPI.md §15.8): it reads what goes to the other
    /// side from `source` (a pipe, FIFO, socket or regular file, from its current offset)
    /// and writes what the other side sends into `sink` (a pipe, FIFO or socket; without
    /// one, those bytes arrive on the stream's reader as usual). handoffd gets its own
    /// copies of both; close yours when this returns (a pipe's reader sees the end only
    /// once every writer has closed).
    ///
    /// The stream's writer then carries only the verdict: `finish()` once the source's
    /// end is a proper end (a command exited 0, say), or `fail` if it is not. The reader
    /// gets `.written(n)` (bytes put into the sink) and the other side's end.
    ///
    /// Throws `HandoffClientError.api` with code `descriptors_unsupported` when this
    /// handoffd has no descriptor socket (an older one): relay the bytes yourself then.
    public func acceptStream<R: Sendable>(_ streamID: String, handingOver source: CInt, sink: CInt? = nil, length: Int64? = nil,
                                          _ body: (ContinuationStream) async throws -> R) async throws -> R {
        try handOver(streamID: streamID, descriptors: [source] + (sink.map { [$0] } ?? []))
        return try await acceptStream(streamID, length: length, body)
    }

    /// One message with the descriptors on the descriptor socket, one JSON line back.
    private func handOver(streamID: String, descriptors: [CInt]) throws {
        let path = DescriptorPassing.socketPath(besideControlSocket: socketPath)
        let fd: CInt
        do { fd = try UnixSocket.connect(to: path, timeout: 5) } catch {
            if case .failed(let e) = error, e == ENOENT || e == ECONNREFUSED {
                throw HandoffClientError.api(APIError(status: 404, code: "descriptors_unsupported",
                                                      message: "handoffd has no descriptor socket at \(path) (an older handoffd?)"))
            }
            throw HandoffClientError.connectionLost("cannot connect to \(path): \(error)")
        }
        try ControlConnection.checkServer(fd, path)
        defer { close(fd) }
        do {
            try DescriptorPassing.send(DescriptorHandover(streamID: streamID).json.serializedBytes(), descriptors: descriptors, on: fd)
        } catch {
            throw HandoffClientError.connectionLost("handing the stream's descriptors to handoffd failed: \(error)")
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while answer.count < 4096 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            answer += chunk[..<n]
        }
        guard let json = try? JSONValue(parsing: answer) else {
            throw HandoffClientError.badResponse("the descriptor socket answered \(answer.count) bytes that are not JSON")
        }
        if json.objectValue?["ok"] == .bool(true) { return }
        throw HandoffClientError.api(APIError(status: 400, body: json) ?? APIError(status: 400, code: "bad_response", message: "the descriptor socket refused without saying why"))
    }
}
