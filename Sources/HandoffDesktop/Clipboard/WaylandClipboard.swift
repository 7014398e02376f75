import CWaylandDataControl
import HandoffCore
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The desktop's clipboard on Wayland, through the data-control protocol
/// (`zwlr_data_control_manager_v1`: sway, Hyprland and other wlroots compositors, KWin),
/// which lets a program without a window follow and set the clipboard. A copy here arrives
/// as an offer with its MIME types; its data is asked for (a pipe the copying app writes
/// into) only when another workstation pastes. Another workstation's copy is offered as a
/// data source whose bytes are fetched when an app here pastes. Every Wayland call happens
/// on one thread of its own; the agent talks to it through `perform`.
final class WaylandClipboard: DesktopClipboard, @unchecked Sendable {
    // @unchecked: everything below `Wayland thread state` is touched on that thread only.

    let kind = "Wayland"
    let events: AsyncStream<DesktopClipboardEvent>
    private let eventSink: AsyncStream<DesktopClipboardEvent>.Continuation
    private let display: OpaquePointer
    private let logger: Logger
    private let commands: WakeQueue

    /// A type every source of ours offers besides the copy's: a selection that offers it
    /// is our own offer, which must not come back as a copy made here.
    static let ownMarker = "application/x-handoff-offer"
    /// A copying app that writes nothing for this long is given up on.
    static let staleSeconds: Int32 = 10

    // MARK: Wayland thread state

    private var seat: OpaquePointer?
    private var manager: OpaquePointer?
    private var device: OpaquePointer?
    /// MIME types of each offer announced, until it is selected or dropped.
    private var offerTypes: [OpaquePointer: [String]] = [:]
    /// The selection now, if an app here copied it, and which copy it is.
    private var selection: OpaquePointer?
    private var selectionIsOurs = false
    private var generation: UInt64 = 0
    private var sources: [OpaquePointer: Source] = [:]
    /// The source we set as the selection last, until the compositor cancels it (an app
    /// copied since, or we set another).
    private var currentSource: OpaquePointer?
    private var closing = false
    private var retained: Unmanaged<WaylandClipboard>?

    private struct Source {
        let id: ClipboardID
        /// The type an app asks for to the MIME type it is fetched as.
        let mimeFor: [String: String]
        let fetch: DesktopClipboardFetch
    }

    // MARK: - Opening

    /// Connects to `$WAYLAND_DISPLAY`; throws when there is no compositor, or it has no
    /// data-control protocol (GNOME's Mutter has none).
    static func open(logger: Logger) throws -> WaylandClipboard {
        guard let display = wl_display_connect(nil) else {
            throw ClipboardFailure("cannot connect to the Wayland display \(getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "(WAYLAND_DISPLAY is not set)")")
        }
        let commands: WakeQueue
        do { commands = try WakeQueue() } catch {
            wl_display_disconnect(display)
            throw error
        }
        let clipboard = WaylandClipboard(display: display, commands: commands, logger: logger)
        let me = Unmanaged.passRetained(clipboard)
        clipboard.retained = me
        let registry = wl_display_get_registry(display)
        wl_registry_add_listener(registry, &WaylandListeners.registry, me.toOpaque())
        wl_display_roundtrip(display)
        guard let manager = clipboard.manager, let seat = clipboard.seat else {
            let missing = clipboard.manager == nil ? "has no data-control protocol (zwlr_data_control_manager_v1)" : "has no seat"
            me.release()
            wl_display_disconnect(display)
            commands.end()
            throw ClipboardFailure("the Wayland compositor \(missing), so no program outside it can follow the clipboard")
        }
        let device = zwlr_data_control_manager_v1_get_data_device(manager, seat)
        clipboard.device = device
        zwlr_data_control_device_v1_add_listener(device, &WaylandListeners.device, me.toOpaque())
        wl_display_roundtrip(display)
        DetachedThread.start { clipboard.loop() }
        return clipboard
    }

    private init(display: OpaquePointer, commands: WakeQueue, logger: Logger) {
        self.display = display
        self.commands = commands
        self.logger = logger
        (events, eventSink) = AsyncStream.makeStream(of: DesktopClipboardEvent.self)
    }

    // MARK: - What the agent asks

    func offer(_ id: ClipboardID, formats: [ClipboardFormat], fetch: @escaping DesktopClipboardFetch) {
        commands.perform { self.setSelection(id, formats, fetch) }
    }

    func withdraw(_ id: ClipboardID) {
        commands.perform {
            // Only while the selection is still that source of ours: an app may have copied since.
            guard let device = self.device, let current = self.currentSource, self.sources[current]?.id == id else { return }
            self.currentSource = nil
            zwlr_data_control_device_v1_set_selection(device, nil)
        }
    }

    func read(_ type: String, generation asked: UInt64) -> AsyncThrowingStream<[UInt8], Error> {
        let (stream, sink) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        commands.perform { self.receive(type, generation: asked, sink) }
        return stream
    }

    func close() { commands.perform { self.closing = true } }

    // MARK: - The Wayland thread

    private func loop() {
        let fd = wl_display_get_fd(display)
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: commands.readEnd, events: Int16(POLLIN), revents: 0)]
        while true {
            for command in commands.take() { command() }
            if closing { return end(nil) }
            // Dispatch what was read already, then read more only when nothing is pending.
            while wl_display_prepare_read(display) != 0 { wl_display_dispatch_pending(display) }
            if closing {
                wl_display_cancel_read(display)
                return end(nil)
            }
            if wl_display_flush(display) < 0 && errno != EAGAIN {
                wl_display_cancel_read(display)
                return end("the connection to the Wayland compositor closed")
            }
            fds[0].revents = 0
            fds[1].revents = 0
            _ = poll(&fds, 2, -1)
            if fds[0].revents & Int16(POLLIN) != 0 {
                if wl_display_read_events(display) < 0 { return end("the connection to the Wayland compositor closed") }
            } else {
                wl_display_cancel_read(display)
            }
            if fds[0].revents & Int16(POLLHUP | POLLERR) != 0 { return end("the connection to the Wayland compositor closed") }
            if wl_display_dispatch_pending(display) < 0 { return end("the Wayland compositor refused a request") }
        }
    }

    /// The thread's last act: nothing more is queued, the events end.
    private func end(_ lost: String?) {
        commands.end()
        if let lost { eventSink.yield(.lost(lost)) }
        eventSink.finish()
        wl_display_disconnect(display)
        retained?.release()
        retained = nil
    }

    // MARK: Events (called by libwayland on this thread)

    fileprivate func global(_ registry: OpaquePointer?, name: UInt32, interface: String, version: UInt32) {
        if interface == String(cString: handoff_data_control_interface_name()) && manager == nil {
            manager = handoff_bind_data_control(registry, name, min(version, 1))
        } else if interface == String(cString: handoff_seat_interface_name()) && seat == nil {
            seat = handoff_bind_seat(registry, name, min(version, 1))
        }
    }

    fileprivate func dataOffer(_ offer: OpaquePointer?) {
        guard let offer else { return }
        offerTypes[offer] = []
        zwlr_data_control_offer_v1_add_listener(offer, &WaylandListeners.offer, Unmanaged.passUnretained(self).toOpaque())
    }

    fileprivate func offered(_ offer: OpaquePointer?, type: String) {
        guard let offer, offerTypes[offer] != nil, offerTypes[offer]!.count < 256 else { return }
        offerTypes[offer]!.append(type)
    }

    /// The clipboard changed: an app here copied (its offer), or it holds nothing (nil),
    /// or our own source took it.
    fileprivate func selected(_ offer: OpaquePointer?) {
        generation &+= 1
        if let old = selection, old != offer {
            zwlr_data_control_offer_v1_destroy(old)
        }
        selection = offer
        guard let offer else {
            selectionIsOurs = false
            eventSink.yield(.cleared(generation: generation))
            return
        }
        let types = offerTypes.removeValue(forKey: offer) ?? []
        selectionIsOurs = types.contains(Self.ownMarker)
        if !selectionIsOurs { eventSink.yield(.copied(generation: generation, targets: types, app: nil)) }
    }

    fileprivate func primarySelected(_ offer: OpaquePointer?) {
        // Only the clipboard is shared, not the primary selection.
        guard let offer else { return }
        offerTypes[offer] = nil
        zwlr_data_control_offer_v1_destroy(offer)
    }

    fileprivate func finished() {
        closing = true
        eventSink.yield(.lost("the Wayland compositor ended the data-control device"))
    }

    // MARK: Reading a copy made here

    private func receive(_ type: String, generation asked: UInt64, _ sink: AsyncThrowingStream<[UInt8], Error>.Continuation) {
        guard asked == generation, let offer = selection, !selectionIsOurs else {
            sink.finish(throwing: ClipboardFailure("the clipboard changed since it was announced"))
            return
        }
        var ends: [CInt] = [0, 0]
        guard pipe(&ends) == 0 else {
            sink.finish(throwing: ClipboardFailure("pipe: \(String(cString: strerror(errno)))"))
            return
        }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        zwlr_data_control_offer_v1_receive(offer, type, ends[1])
        wl_display_flush(display)
        Glibc.close(ends[1])  // the request took its own copy; the app's is the only writer left
        let readEnd = ends[0]
        // The copying app writes when it likes: read on a thread of its own until it closes.
        DetachedThread.start {
            defer { Glibc.close(readEnd) }
            var buffer = [UInt8](repeating: 0, count: 256 * 1024)
            var ready = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)]
            var total = 0
            while true {
                ready[0].revents = 0
                guard poll(&ready, 1, WaylandClipboard.staleSeconds * 1000) > 0 else {
                    sink.finish(throwing: ClipboardFailure("the app that copied did not hand over its data in time"))
                    return
                }
                let n = buffer.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
                if n == 0 { break }
                if n < 0 {
                    if errno == EINTR { continue }
                    sink.finish(throwing: ClipboardFailure("reading the clipboard: \(String(cString: strerror(errno)))"))
                    return
                }
                total += n
                guard total <= X11Clipboard.readLimit else {
                    sink.finish(throwing: ClipboardFailure("the copy is larger than \(X11Clipboard.readLimit >> 20) MiB, more than a paste elsewhere takes"))
                    return
                }
                sink.yield(Array(buffer[..<n]))
            }
            sink.finish()
        }
    }

    // MARK: Offering another workstation's copy

    private func setSelection(_ id: ClipboardID, _ formats: [ClipboardFormat], _ fetch: @escaping DesktopClipboardFetch) {
        guard let manager, let device, let source = zwlr_data_control_manager_v1_create_data_source(manager) else { return }
        zwlr_data_control_source_v1_add_listener(source, &WaylandListeners.source, Unmanaged.passUnretained(self).toOpaque())
        var mimeFor: [String: String] = [:]
        for (type, mime) in ClipboardTargets.offered(formats) {
            mimeFor[type] = mime
            zwlr_data_control_source_v1_offer(source, type)
        }
        zwlr_data_control_source_v1_offer(source, Self.ownMarker)
        sources[source] = Source(id: id, mimeFor: mimeFor, fetch: fetch)
        currentSource = source
        // The source it replaces hears `cancelled`, and goes then.
        zwlr_data_control_device_v1_set_selection(device, source)
    }

    /// An app here pastes our source: its bytes, fetched now, written into its pipe.
    fileprivate func send(_ source: OpaquePointer?, type: String, fd: CInt) {
        guard let source, let s = sources[source], let mime = s.mimeFor[type] else {
            Glibc.close(fd)
            return
        }
        let logger = self.logger
        Task {
            do {
                let bytes = try await s.fetch(mime)
                DetachedThread.start {
                    defer { Glibc.close(fd) }
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                    var offset = 0
                    var ready = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
                    while offset < bytes.count {
                        // An app that stops reading is given up on, as one that stops writing is.
                        ready[0].revents = 0
                        guard poll(&ready, 1, WaylandClipboard.staleSeconds * 1000) > 0 else { return }
                        let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                        if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                        guard n > 0 else { return }  // the pasting app went away
                        offset += n
                    }
                }
            } catch {
                logger.notice("a paste here could not get the other workstation's copy", metadata: ["type": "\(mime)", "error": "\(error)"])
                Glibc.close(fd)
            }
        }
    }

    fileprivate func cancelled(_ source: OpaquePointer?) {
        guard let source else { return }
        sources[source] = nil
        if currentSource == source { currentSource = nil }
        zwlr_data_control_source_v1_destroy(source)
    }

    fileprivate static func from(_ data: UnsafeMutableRawPointer?) -> WaylandClipboard {
        Unmanaged<WaylandClipboard>.fromOpaque(data!).takeUnretainedValue()
    }
}

/// libwayland's listeners: C function pointers that find the clipboard in `data`. Static,
/// since libwayland keeps the pointer for the proxy's life.
enum WaylandListeners {
    nonisolated(unsafe) static var registry = wl_registry_listener(
        global: { data, registry, name, interface, version in
            guard let interface else { return }
            WaylandClipboard.from(data).global(registry, name: name, interface: String(cString: interface), version: version)
        },
        global_remove: { _, _, _ in })

    nonisolated(unsafe) static var device = zwlr_data_control_device_v1_listener(
        data_offer: { data, _, offer in WaylandClipboard.from(data).dataOffer(offer) },
        selection: { data, _, offer in WaylandClipboard.from(data).selected(offer) },
        finished: { data, _ in WaylandClipboard.from(data).finished() },
        primary_selection: { data, _, offer in WaylandClipboard.from(data).primarySelected(offer) })

    nonisolated(unsafe) static var offer = zwlr_data_control_offer_v1_listener(
        offer: { data, offer, type in
            guard let type else { return }
            WaylandClipboard.from(data).offered(offer, type: String(cString: type))
        })

    nonisolated(unsafe) static var source = zwlr_data_control_source_v1_listener(
        send: { data, source, type, fd in
            guard let type else { Glibc.close(fd); return }
            WaylandClipboard.from(data).send(source, type: String(cString: type), fd: fd)
        },
        cancelled: { data, source in WaylandClipboard.from(data).cancelled(source) })
}
