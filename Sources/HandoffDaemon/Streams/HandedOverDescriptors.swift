import HandoffControlAPI
#if canImport(Glibc)
import Glibc
#endif

/// The open files an origin app handed over for one stream (LocalAPI.md §15.8): handoffd
/// reads the source and sends it to the other side, and writes what the other side sends
/// into the sink, so those bytes never cross the app's control connection or the app.
/// Owned by whoever holds it last; `close()` when it is not used after all.
struct HandedOverDescriptors: Sendable, Equatable {
    enum SourceKind: Sendable, Equatable {
        /// A pipe, FIFO or socket: read as it becomes readable, on the event loop.
        case stream
        /// A regular file: read 1 MiB at a time on the thread pool, as a stream file is.
        case file
    }

    let source: CInt
    let sourceKind: SourceKind
    /// A pipe, FIFO or socket; without one, the other side's bytes reach the app in `data`
    /// frames as usual.
    let sink: CInt?
    /// The sink is a socket: shut down for writing at the end, not only closed.
    var sinkIsSocket = false

    func close() {
        _ = Glibc.close(source)
        if let sink { _ = Glibc.close(sink) }
    }

    /// Checks what arrived: one or two descriptors, each of a kind handoffd can serve
    /// without blocking, open the right way. On a failure every descriptor is closed.
    static func check(_ fds: [CInt]) -> Result<HandedOverDescriptors, HandoffErrorText> {
        func refuse(_ m: String) -> Result<HandedOverDescriptors, HandoffErrorText> {
            for fd in fds { _ = Glibc.close(fd) }
            return .failure(HandoffErrorText(m))
        }
        guard fds.count == 1 || fds.count == 2 else {
            return refuse("send one descriptor (the stream's source) or two (source, then sink); \(fds.count) arrived")
        }
        guard let source = kind(of: fds[0]), source != .other else {
            return refuse("the source must be a pipe, FIFO, connected stream socket or regular file")
        }
        let sourceMode = accessMode(fds[0])
        guard sourceMode != O_WRONLY else { return refuse("the source is not open for reading") }
        // A FIFO open for reading and writing never ends: handoffd's own copy is a writer.
        guard !(isFIFO(fds[0]) && sourceMode == O_RDWR) else { return refuse("the source is a FIFO open for writing too: it would never end") }
        var sink: CInt?
        var sinkIsSocket = false
        if fds.count == 2 {
            guard kind(of: fds[1]) == .stream else {
                return refuse("the sink must be a pipe, FIFO or connected stream socket (for a file, let the continuing side write it: `into`)")
            }
            guard accessMode(fds[1]) != O_RDONLY else { return refuse("the sink is not open for writing") }
            sink = fds[1]
            sinkIsSocket = isSocket(fds[1])
        }
        return .success(HandedOverDescriptors(source: fds[0], sourceKind: source == .file ? .file : .stream, sink: sink, sinkIsSocket: sinkIsSocket))
    }

    private enum Kind { case stream, file, other }

    private static func kind(of fd: CInt) -> Kind? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFIFO: return .stream
        // A stream socket, connected: a datagram's empty message would read as the end,
        // and a listening socket has nothing to read.
        case S_IFSOCK: return socketOption(fd, SO_TYPE) == Int32(SOCK_STREAM.rawValue) && socketOption(fd, SO_ACCEPTCONN) == 0 ? .stream : .other
        case S_IFREG: return .file
        default: return .other
        }
    }

    private static func socketOption(_ fd: CInt, _ name: CInt) -> CInt? {
        var value: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
    }

    private static func isFIFO(_ fd: CInt) -> Bool { mode(fd) == S_IFIFO }
    private static func isSocket(_ fd: CInt) -> Bool { mode(fd) == S_IFSOCK }
    private static func mode(_ fd: CInt) -> mode_t? {
        var st = stat()
        return fstat(fd, &st) == 0 ? st.st_mode & S_IFMT : nil
    }

    private static func accessMode(_ fd: CInt) -> CInt { fcntl(fd, F_GETFL) & O_ACCMODE }
}

struct HandoffErrorText: Error, Sendable, Equatable {
    let message: String
    init(_ m: String) { message = m }
}
