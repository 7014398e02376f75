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
            return refuse("the source must be a pipe, FIFO, socket or regular file")
        }
        guard accessMode(fds[0]) != O_WRONLY else { return refuse("the source is not open for reading") }
        var sink: CInt?
        if fds.count == 2 {
            guard kind(of: fds[1]) == .stream else {
                return refuse("the sink must be a pipe, FIFO or socket (for a file, let the continuing side write it: `into`)")
            }
            guard accessMode(fds[1]) != O_RDONLY else { return refuse("the sink is not open for writing") }
            sink = fds[1]
        }
        return .success(HandedOverDescriptors(source: fds[0], sourceKind: source == .file ? .file : .stream, sink: sink))
    }

    private enum Kind { case stream, file, other }

    private static func kind(of fd: CInt) -> Kind? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFIFO, S_IFSOCK: return .stream
        case S_IFREG: return .file
        default: return .other
        }
    }

    private static func accessMode(_ fd: CInt) -> CInt { fcntl(fd, F_GETFL) & O_ACCMODE }
}

struct HandoffErrorText: Error, Sendable, Equatable {
    let message: String
    init(_ m: String) { message = m }
}
