import CXCB
import HandoffCore
import HandoffSystem
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The desktop's clipboard on X11, through XCB: who owns CLIPBOARD (XFixes tells at once),
/// its targets and, only when asked, its data (ICCCM conversions, INCR for large data);
/// and owning CLIPBOARD to offer another workstation's copy to the apps here, fetching
/// the bytes only when one of them pastes. Every X call happens on one thread of its
/// own; the agent talks to it through `perform`, and hears from it through `events`.
final class X11Clipboard: DesktopClipboard, @unchecked Sendable {
    // @unchecked: everything below `X thread state` is touched on the X thread only (here
    // and in X11Clipboard+Offering.swift; internal, not private, for that file).
    typealias Failure = ClipboardFailure
    typealias Fetch = DesktopClipboardFetch

    let kind = "X11"
    let events: AsyncStream<DesktopClipboardEvent>
    let eventSink: AsyncStream<DesktopClipboardEvent>.Continuation
    let connection: OpaquePointer
    let window: xcb_window_t
    private let xfixesEvent: UInt8
    let logger: Logger
    let commands: WakeQueue
    /// A property larger than this goes in INCR pieces of this size.
    let pieceBytes: Int
    /// A conversion or INCR transfer that makes no progress for this long is given up.
    static let stale: Duration = .seconds(10)
    /// The most one read of a copy here takes (the daemons' own cap by default): what an
    /// app hands over in INCR pieces is held until sent, so it must end somewhere.
    static let readLimit = 64 << 20

    // MARK: X thread state

    var atoms: [String: xcb_atom_t] = [:]
    var names: [xcb_atom_t: String] = [:]
    var generation: UInt64 = 0
    var owner: xcb_window_t = 0
    /// When the owner took the clipboard (its XFixes event's selection time): conversions
    /// name it, so an owner that took the clipboard later refuses them (ICCCM) rather than
    /// hand over a newer copy under an older copy's name.
    var ownerSince: xcb_timestamp_t = 0
    /// The app that owns the clipboard, as its window names it.
    var ownerApp: CopyingApp?
    var offered: Offered?
    var reads: [xcb_atom_t: Read] = [:]
    var transfers: [TransferKey: Transfer] = [:]
    var deferred: [UnsafeMutablePointer<xcb_generic_event_t>] = []
    var nextProperty = 0
    var closing = false

    struct Offered {
        let id: ClipboardID
        /// Target atom to the MIME type it is served as.
        let targets: [xcb_atom_t: String]
        let fetch: Fetch
        let time: xcb_timestamp_t
    }

    struct Read {
        let target: xcb_atom_t
        var incremental = false
        var touched = ContinuousClock.now
        let kind: Kind
        /// Bytes delivered so far (a data read stops at `readLimit`).
        var bytes = 0
        enum Kind {
            case targets(UInt64)
            /// The copy it reads (a change of owner before it ends fails it).
            case data(AsyncThrowingStream<[UInt8], Error>.Continuation, generation: UInt64)
        }
    }

    struct TransferKey: Hashable {
        let requestor: xcb_window_t
        let property: xcb_atom_t
    }

    struct Transfer {
        let type: xcb_atom_t
        let bytes: [UInt8]
        var offset = 0
        var touched = ContinuousClock.now
    }

    // MARK: - Opening

    /// Connects to `display` (nil: `$DISPLAY`) and starts watching the clipboard.
    static func open(display: String?, logger: Logger) throws -> X11Clipboard {
        var screenNumber: Int32 = 0
        guard let c = xcb_connect(display, &screenNumber) else { throw Failure("cannot connect to the X display") }
        guard xcb_connection_has_error(c) == 0 else {
            xcb_disconnect(c)
            throw Failure("cannot connect to the X display \(display ?? getenv("DISPLAY").map { String(cString: $0) } ?? "(DISPLAY is not set)")")
        }
        var it = xcb_setup_roots_iterator(xcb_get_setup(c))
        for _ in 0..<max(0, screenNumber) { xcb_screen_next(&it) }
        guard let screen = it.data else {
            xcb_disconnect(c)
            throw Failure("the X display has no screen \(screenNumber)")
        }
        free(xcb_xfixes_query_version_reply(c, xcb_xfixes_query_version(c, 5, 0), nil))
        guard let ext = handoff_xfixes_extension(c), ext.pointee.present != 0 else {
            xcb_disconnect(c)
            throw Failure("the X server lacks the XFixes extension, which tells when the clipboard changes")
        }
        let window = xcb_generate_id(c)
        var mask = XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue
        xcb_create_window(c, 0, window, screen.pointee.root, 0, 0, 1, 1, 0, UInt16(XCB_WINDOW_CLASS_INPUT_ONLY.rawValue),
                          0, XCB_CW_EVENT_MASK.rawValue, &mask)
        let maximum = Int(xcb_get_maximum_request_length(c)) * 4
        let commands: WakeQueue
        do { commands = try WakeQueue() } catch {
            xcb_disconnect(c)
            throw error
        }
        let clipboard = X11Clipboard(connection: c, window: window, xfixesEvent: ext.pointee.first_event, commands: commands,
                                     pieceBytes: max(4096, min(256 * 1024, maximum - 1024)), logger: logger)
        let selectionMask = XCB_XFIXES_SELECTION_EVENT_MASK_SET_SELECTION_OWNER.rawValue
            | XCB_XFIXES_SELECTION_EVENT_MASK_SELECTION_WINDOW_DESTROY.rawValue | XCB_XFIXES_SELECTION_EVENT_MASK_SELECTION_CLIENT_CLOSE.rawValue
        xcb_xfixes_select_selection_input(c, window, clipboard.atom("CLIPBOARD"), selectionMask)
        xcb_flush(c)
        DetachedThread.start { clipboard.loop() }
        return clipboard
    }

    private init(connection: OpaquePointer, window: xcb_window_t, xfixesEvent: UInt8, commands: WakeQueue, pieceBytes: Int, logger: Logger) {
        self.connection = connection
        self.window = window
        self.xfixesEvent = xfixesEvent
        self.commands = commands
        self.pieceBytes = pieceBytes
        self.logger = logger
        (events, eventSink) = AsyncStream.makeStream(of: DesktopClipboardEvent.self)
    }

    // MARK: - What the agent asks

    /// Offers another workstation's copy to the apps here: this window owns CLIPBOARD,
    /// and a paste calls `fetch` for the bytes.
    func offer(_ id: ClipboardID, formats: [ClipboardFormat], fetch: @escaping Fetch) {
        perform { self.takeOwnership(id, formats, fetch) }
    }

    /// Stops offering copy `id` (the account has no copy any more); the clipboard here
    /// is then empty, as it would be once its owner went away.
    func withdraw(_ id: ClipboardID) {
        perform {
            guard let offered = self.offered, offered.id == id else { return }
            self.offered = nil
            // At the time we took it: the server ignores this if an app has taken the
            // clipboard since (its copy is not ours to clear).
            xcb_set_selection_owner(self.connection, 0, self.atom("CLIPBOARD"), offered.time)
        }
    }

    /// The data of the copy here in `target`, if it is still copy `generation`: pieces as
    /// the owner gives them. Throws when the clipboard changed since, or its owner refused.
    func read(_ target: String, generation: UInt64) -> AsyncThrowingStream<[UInt8], Error> {
        let (stream, sink) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        perform { self.convert(target, generation: generation, sink) }
        return stream
    }

    /// Disconnects from the X server; the events end.
    func close() {
        perform { self.closing = true }
    }

    func perform(_ body: @escaping @Sendable () -> Void) { commands.perform(body) }

    /// The X thread's last act: nothing more is queued, reads fail, the events end.
    func end(_ why: String, lost: Bool) {
        commands.end()
        for read in reads.values { if case .data(let sink, _) = read.kind { sink.finish(throwing: Failure(why)) } }
        reads.removeAll()
        if lost { eventSink.yield(.lost(why)) }
        eventSink.finish()
        xcb_disconnect(connection)
    }

    // MARK: - The X thread

    func loop() {
        var fds = [pollfd(fd: xcb_get_file_descriptor(connection), events: Int16(POLLIN), revents: 0),
                   pollfd(fd: commands.readEnd, events: Int16(POLLIN), revents: 0)]
        while true {
            for command in commands.take() { command() }
            drainEvents()
            expireStale()
            xcb_flush(connection)
            if closing { return end("the clipboard is not shared any more", lost: false) }
            if xcb_connection_has_error(connection) != 0 { return end("the connection to the X server closed", lost: true) }
            fds[0].revents = 0
            fds[1].revents = 0
            _ = poll(&fds, 2, reads.isEmpty && transfers.isEmpty ? -1 : 1000)
        }
    }

    func drainEvents() {
        while true {
            let event: UnsafeMutablePointer<xcb_generic_event_t>
            if !deferred.isEmpty {
                event = deferred.removeFirst()
            } else if let next = xcb_poll_for_event(connection) {
                event = next
            } else {
                return
            }
            handle(event)
            free(event)
        }
    }

    func handle(_ event: UnsafeMutablePointer<xcb_generic_event_t>) {
        let raw = UnsafeRawPointer(event)
        switch event.pointee.response_type & 0x7F {
        case xfixesEvent &+ UInt8(XCB_XFIXES_SELECTION_NOTIFY):
            ownerChanged(raw.load(as: xcb_xfixes_selection_notify_event_t.self))
        case UInt8(XCB_SELECTION_REQUEST):
            requested(raw.load(as: xcb_selection_request_event_t.self))
        case UInt8(XCB_SELECTION_NOTIFY):
            converted(raw.load(as: xcb_selection_notify_event_t.self))
        case UInt8(XCB_SELECTION_CLEAR):
            let e = raw.load(as: xcb_selection_clear_event_t.self)
            if e.owner == window, e.selection == atom("CLIPBOARD") { offered = nil }
        case UInt8(XCB_PROPERTY_NOTIFY):
            propertyChanged(raw.load(as: xcb_property_notify_event_t.self))
        case UInt8(XCB_DESTROY_NOTIFY):
            // A requestor that went away mid-INCR: its pieces are nobody's now.
            let gone = raw.load(as: xcb_destroy_notify_event_t.self).window
            for key in transfers.keys where key.requestor == gone { transfers[key] = nil }
        default:
            break
        }
    }

    // MARK: Copies here

    func ownerChanged(_ e: xcb_xfixes_selection_notify_event_t) {
        guard e.selection == atom("CLIPBOARD") else { return }
        // A change from before we took the clipboard, read only now (events read while
        // waiting for a reply are handled later): the clipboard is ours since.
        if let offered, e.owner != window, e.selection_timestamp < offered.time { return }
        generation &+= 1
        owner = e.owner
        ownerSince = e.selection_timestamp
        // Our own offer taking the clipboard is not a copy here: it must not echo back.
        // (Losing it to another app is SelectionClear's to say.)
        if e.owner == window { return }
        guard e.owner != 0 else {
            ownerApp = nil
            eventSink.yield(.cleared(generation: generation))
            return
        }
        ownerApp = app(owning: e.owner)
        // Its targets (the formats), never its data: that is read only when pasted.
        startConversion(atom("TARGETS"), time: e.timestamp, kind: .targets(generation))
    }

    func convert(_ target: String, generation asked: UInt64, _ sink: AsyncThrowingStream<[UInt8], Error>.Continuation) {
        guard asked == generation, owner != 0, owner != window else {
            sink.finish(throwing: Failure("the clipboard changed since it was announced"))
            return
        }
        startConversion(atom(target), time: ownerSince, kind: .data(sink, generation: asked))
    }

    func startConversion(_ target: xcb_atom_t, time: xcb_timestamp_t, kind: Read.Kind) {
        // A property of ours per conversion in flight, from a small pool.
        let property = atom("HANDOFF_SELECTION_\(nextProperty)")
        nextProperty = (nextProperty + 1) % 16
        if let old = reads.removeValue(forKey: property), case .data(let sink, _) = old.kind {
            sink.finish(throwing: Failure("too many clipboard reads at once"))
        }
        reads[property] = Read(target: target, kind: kind)
        xcb_convert_selection(connection, window, atom("CLIPBOARD"), target, property, time)
    }

    /// The owner answered a conversion of ours: the data is in our property, or in INCR
    /// pieces to come, or it refused (property None).
    func converted(_ e: xcb_selection_notify_event_t) {
        guard e.requestor == window, e.selection == atom("CLIPBOARD") else { return }
        guard e.property != 0 else {
            if let key = reads.first(where: { $0.value.target == e.target && !$0.value.incremental })?.key {
                finish(key, Failure("the app that copied refused to hand over \(name(e.target))"))
            }
            return
        }
        guard let read = reads[e.property], read.target == e.target else { return }
        guard let (type, bytes) = takeProperty(e.property) else {
            finish(e.property, Failure("could not read the clipboard's data"))
            return
        }
        if type == atom("INCR") {
            // Deleting the property (done) asks for the first piece.
            reads[e.property]?.incremental = true
            reads[e.property]?.touched = ContinuousClock.now
            return
        }
        deliver(e.property, bytes)
        finish(e.property, nil)
    }

    func propertyChanged(_ e: xcb_property_notify_event_t) {
        if e.window == window {
            guard e.state == UInt8(XCB_PROPERTY_NEW_VALUE.rawValue), let read = reads[e.atom], read.incremental else { return }
            guard let (_, bytes) = takeProperty(e.atom) else {
                finish(e.atom, Failure("could not read the clipboard's data"))
                return
            }
            reads[e.atom]?.touched = ContinuousClock.now
            if bytes.isEmpty {
                finish(e.atom, nil)
            } else {
                deliver(e.atom, bytes)
            }
        } else if e.state == UInt8(XCB_PROPERTY_DELETE.rawValue) {
            sendNextPiece(TransferKey(requestor: e.window, property: e.atom))
        }
    }

    func deliver(_ property: xcb_atom_t, _ bytes: [UInt8]) {
        guard let read = reads[property] else { return }
        switch read.kind {
        case .data(let sink, let copy):
            guard copy == generation else { return finish(property, Failure("the clipboard changed while it was read")) }
            reads[property]?.bytes += bytes.count
            guard read.bytes + bytes.count <= Self.readLimit else {
                return finish(property, Failure("the copy is larger than \(Self.readLimit >> 20) MiB, more than a paste elsewhere takes"))
            }
            if !bytes.isEmpty { sink.yield(bytes) }
        case .targets(let asked):
            guard asked == generation else { return }
            var list: [xcb_atom_t] = []
            bytes.withUnsafeBytes { raw in
                for i in stride(from: 0, to: raw.count - 3, by: 4) { list.append(raw.loadUnaligned(fromByteOffset: i, as: xcb_atom_t.self)) }
            }
            eventSink.yield(.copied(generation: asked, targets: atomNames(list), app: ownerApp))
        }
    }

    func finish(_ property: xcb_atom_t, _ failure: Failure?) {
        guard let read = reads.removeValue(forKey: property) else { return }
        switch read.kind {
        case .data(let sink, let copy):
            if let failure {
                sink.finish(throwing: failure)
            } else if copy != generation {
                sink.finish(throwing: Failure("the clipboard changed while it was read"))
            } else {
                sink.finish()
            }
        case .targets(let asked):
            // An owner that cannot say its targets offers nothing we could paste elsewhere.
            if failure != nil, asked == generation { eventSink.yield(.copied(generation: asked, targets: [], app: ownerApp)) }
        }
    }

    /// Reads and deletes one of our properties: its type and bytes.
    func takeProperty(_ property: xcb_atom_t) -> (xcb_atom_t, [UInt8])? {
        guard let reply = xcb_get_property_reply(connection, xcb_get_property(connection, 1, window, property, 0, 0, 0x1FFF_FFFF), nil) else { return nil }
        defer { free(reply) }
        let length = Int(xcb_get_property_value_length(reply))
        let bytes = length > 0 ? Array(UnsafeRawBufferPointer(start: xcb_get_property_value(reply), count: length)) : []
        return (reply.pointee.type, bytes)
    }

    /// The app behind an owner window: its `WM_CLASS`, else its client leader's (toolkits
    /// often own the clipboard with a hidden window that names nothing, and set the names
    /// on the leader), and the process name when `_NET_WM_PID` is given by a client on
    /// this machine (`WM_CLIENT_MACHINE`).
    func app(owning owner: xcb_window_t) -> CopyingApp? {
        var windows = [owner]
        if let (type, bytes) = property(atom("WM_CLIENT_LEADER"), of: owner), type == XCB_ATOM_WINDOW.rawValue, bytes.count >= 4 {
            let leader = bytes.withUnsafeBytes { $0.loadUnaligned(as: xcb_window_t.self) }
            if leader != 0 && leader != owner { windows.append(leader) }
        }
        var names: [String] = []
        for w in windows where names.isEmpty {
            if let (_, bytes) = property(XCB_ATOM_WM_CLASS.rawValue, of: w) { names = CopyingApp.wmClass(bytes) }
        }
        for w in windows {
            guard let (type, bytes) = property(atom("_NET_WM_PID"), of: w), type == XCB_ATOM_CARDINAL.rawValue, bytes.count >= 4,
                  let (_, machine) = property(XCB_ATOM_WM_CLIENT_MACHINE.rawValue, of: w), isThisMachine(machine) else { continue }
            let pid = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            if let comm = try? BoundedFile.read("/proc/\(pid)/comm", limit: 256) {
                names.append(String(decoding: comm.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self))
            }
            break
        }
        return CopyingApp(names: names)
    }

    /// A property of another client's window (at most 4 KiB of it), nil when it has none.
    func property(_ property: xcb_atom_t, of w: xcb_window_t) -> (xcb_atom_t, [UInt8])? {
        guard let reply = xcb_get_property_reply(connection, xcb_get_property(connection, 0, w, property, 0, 0, 1024), nil) else { return nil }
        defer { free(reply) }
        guard reply.pointee.type != 0 else { return nil }
        let length = Int(xcb_get_property_value_length(reply))
        return (reply.pointee.type, length > 0 ? Array(UnsafeRawBufferPointer(start: xcb_get_property_value(reply), count: length)) : [])
    }

    func isThisMachine(_ name: [UInt8]) -> Bool {
        guard let here = HostName.current else { return false }
        return String(decoding: name.prefix { $0 != 0 }, as: UTF8.self) == here
    }
}
