import HandoffSystem
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes plain file descriptors (files, pipes, a terminal) off the async
/// threads: each call runs on a small pool of its own, so a child process that is slow to
/// read its stdin never stalls the stream's other direction.
struct BlockingFile: Sendable {
    let fd: CInt
    let name: String
    /// Regular files and devices such as /dev/null answer at once: their calls are made
    /// in place, without the hop to the pool (a thread switch per chunk costs more than the
    /// call). Pipes, terminals and sockets can block for as long as their other end likes.
    let direct: Bool

    init(fd: CInt, name: String) {
        self.fd = fd
        self.name = name
        var st = stat()
        let kind = fstat(fd, &st) == 0 ? st.st_mode & S_IFMT : 0
        direct = kind == S_IFREG || (kind == S_IFCHR && isatty(fd) == 0)
    }

    static let pool: NIOThreadPool = {
        let p = NIOThreadPool(numberOfThreads: 8)
        p.start()
        return p
    }()

    static let chunkBytes = 256 * 1024

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Up to `chunkBytes`; an empty buffer at end of file.
    func read() async throws -> ByteBuffer {
        if direct { return try readNow() }
        return try await BlockingFile.pool.runIfActive { try readNow() }
    }

    private func readNow() throws -> ByteBuffer {
        do { return try ByteBuffer.readChunk(from: fd, upTo: BlockingFile.chunkBytes) } catch let e as ReadFailure {
            throw Failure(description: "reading \(name): \(e.reason)")
        }
    }

    /// Writes all of `bytes`.
    func write(_ bytes: ByteBuffer) async throws {
        if direct { return try writeNow(bytes) }
        try await BlockingFile.pool.runIfActive { try writeNow(bytes) }
    }

    private func writeNow(_ bytes: ByteBuffer) throws {
        do { try bytes.withUnsafeReadableBytes { try writeAll(fd, $0) } } catch let e as WriteFailure {
            throw Failure(description: "writing \(name): \(e.reason)")
        }
    }
}
