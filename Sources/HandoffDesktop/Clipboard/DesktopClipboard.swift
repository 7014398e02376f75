import HandoffCore
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// The desktop's clipboard as the session agent uses it, whatever speaks to it
/// (`X11Clipboard`, `WaylandClipboard`): it says when an app here copied (the formats,
/// never the data), reads one format's data only when asked, and offers another
/// workstation's copy to the apps here, fetching the bytes only when one pastes.
protocol DesktopClipboard: AnyObject, Sendable {
    /// "X11" or "Wayland", for `handoffctl sources`.
    var kind: String { get }
    var events: AsyncStream<DesktopClipboardEvent> { get }
    /// Offers another workstation's copy here; a paste calls `fetch` for its bytes.
    func offer(_ id: ClipboardID, formats: [ClipboardFormat], fetch: @escaping DesktopClipboardFetch)
    /// Stops offering copy `id`: the clipboard here is then empty.
    func withdraw(_ id: ClipboardID)
    /// The data of the copy here in `type`, if it is still copy `generation`, piece by piece.
    func read(_ type: String, generation: UInt64) -> AsyncThrowingStream<[UInt8], Error>
    /// Lets go of the display; the events end.
    func close()
}

enum DesktopClipboardEvent: Sendable, Equatable {
    /// An app here copied: its targets or MIME types, and the app where the display server
    /// says. `generation` names this copy when reading it.
    case copied(generation: UInt64, targets: [String], app: CopyingApp?)
    /// The clipboard here holds nothing now (its owner went away).
    case cleared(generation: UInt64)
    /// The connection to the display server is gone.
    case lost(String)
}

/// Fetches the bytes of a copy offered here, in one MIME type, when an app here pastes.
typealias DesktopClipboardFetch = @Sendable (_ mime: String) async throws -> [UInt8]

struct ClipboardFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Work for a display connection's own thread: queued from any thread, run on that thread
/// when it wakes up (a byte on a pipe it polls beside the display's socket). Once ended,
/// nothing more is queued and the pipe, closed, is never written to.
final class WakeQueue: Sendable {
    private let state = NIOLockedValueBox<(list: [@Sendable () -> Void], ended: Bool)>(([], false))
    /// The end the thread polls.
    let readEnd: CInt
    private let writeEnd: CInt

    init() throws {
        var ends: [CInt] = [0, 0]
        guard pipe(&ends) == 0 else { throw ClipboardFailure("pipe: \(String(cString: strerror(errno)))") }
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        (readEnd, writeEnd) = (ends[0], ends[1])
    }

    func perform(_ body: @escaping @Sendable () -> Void) {
        state.withLockedValue { s in
            guard !s.ended else { return }
            s.list.append(body)
            var one: UInt8 = 1
            _ = Glibc.write(writeEnd, &one, 1)
        }
    }

    /// What was queued, taken; the wake-up bytes read.
    func take() -> [@Sendable () -> Void] {
        var sink = [UInt8](repeating: 0, count: 64)
        while Glibc.read(readEnd, &sink, sink.count) > 0 {}
        return state.withLockedValue { s in defer { s.list.removeAll() }; return s.list }
    }

    func end() {
        state.withLockedValue { s in
            guard !s.ended else { return }
            s.ended = true
            s.list.removeAll()
            Glibc.close(readEnd)
            Glibc.close(writeEnd)
        }
    }
}
