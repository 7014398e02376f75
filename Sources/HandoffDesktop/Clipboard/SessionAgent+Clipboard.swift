import HandoffClient
import HandoffControlAPI
import HandoffCore
import Logging
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// What the session agent knows of the clipboard here and across the account.
struct ClipboardBridge {
    /// The desktop's clipboard; nil when there is none, `problem` says why.
    var desktop: (any DesktopClipboard)?
    var problem: String?
    /// Said beside it in `handoffctl sources` (the Wayland compositor without data-control
    /// whose XWayland clipboard is shared instead).
    var note: String?
    /// The copy here the agent announced: its id, which copy of the desktop's clipboard it
    /// is, and the target to read each format from.
    var announced: (id: ClipboardID, generation: UInt64, targetFor: [String: String])?
    /// The last copy here worth announcing, announced again when the agent reconnects.
    var lastCopy: (generation: UInt64, reading: ClipboardTargets.Reading)?
    /// The account's copy the agent offers to the apps here.
    var offered: ClipboardID?
    /// The account's copy not offered at once because this desktop would read it whole
    /// (`DesktopKind.readsWholeAtOnce`): the menu's Paste offers it.
    var heldBack: ClipboardID?
    /// When an app here last copied: an account's copy older than that is not offered
    /// here (it would take the clipboard from the newer copy).
    var lastLocalCopy: Timestamp?
    var watch: Task<Void, Never>?
}

/// The clipboard across workstations (LocalAPI.md §23) on this desktop: a copy here is
/// announced as its formats; a copy on another workstation is offered here by owning the
/// clipboard, and its bytes are fetched only when an app here pastes. The desktop's side
/// is a `DesktopClipboard` (Wayland's or X11's); what to announce is `ClipboardTargets`'.
extension SessionAgent {
    /// The most a paste here takes from another workstation into memory (X11 hands data
    /// over whole or in INCR pieces of one buffer).
    static let pasteLimit = 256 << 20

    /// Starts sharing the desktop's clipboard (`reconcileSources`, when it is on): Wayland's
    /// through its data-control protocol, else X11's.
    func startClipboard() {
        guard clipboard.desktop == nil else { return }
        var problems: [String] = []
        var opened: (any DesktopClipboard)?
        if getenv("WAYLAND_DISPLAY") != nil {
            do { opened = try WaylandClipboard.open(logger: logger) } catch { problems.append("\(error)") }
        }
        if opened == nil, let display = getenv("DISPLAY").map({ String(cString: $0) }), !display.isEmpty {
            do {
                opened = try X11Clipboard.open(display: display, logger: logger)
                if !problems.isEmpty {
                    clipboard.note = Self.desktopKind == .gnome
                        // Measured with GNOME Shell 43 (GnomeShellTests): Mutter owns XWayland's
                        // CLIPBOARD for a Wayland app's copy, and offers an X client's to
                        // Wayland apps, both read on demand.
                        ? "GNOME has no data-control protocol; sharing XWayland's X11 clipboard instead, which GNOME keeps in step with Wayland apps' both ways"
                        : "\(problems[0]); sharing XWayland's X11 clipboard instead, which holds Wayland apps' copies only if the compositor mirrors them"
                }
            } catch { problems.append("\(error)") }
        }
        guard let desktop = opened else {
            let problem = problems.isEmpty ? "no graphical display (neither WAYLAND_DISPLAY nor DISPLAY is set)" : problems.joined(separator: "; ")
            // Tried again at every reconcile (each `doctor` and `sources` asks for one): said
            // once per reason, not once per try.
            if problem != clipboard.problem { logger.debug("no clipboard to share", metadata: ["why": "\(problem)"]) }
            clipboard.problem = problem
            return
        }
        clipboard.desktop = desktop
        clipboard.problem = nil
        logger.info("sharing the clipboard", metadata: ["display": "\(desktop.kind)"])
        clipboard.watch = Task {
            for await event in desktop.events { await self.desktopClipboard(event) }
        }
    }

    /// This session's desktop, as its session manager set `XDG_CURRENT_DESKTOP`.
    static var desktopKind: DesktopKind {
        DesktopKind(currentDesktop: getenv("XDG_CURRENT_DESKTOP").map { String(cString: $0) })
    }

    /// Stops sharing (`clipboard = no`): what was announced is withdrawn, what was offered
    /// here taken back.
    func stopClipboard() async {
        // Forgotten before the await, so nothing arriving meanwhile is announced or offered.
        let was = clipboard
        clipboard = ClipboardBridge()
        was.watch?.cancel()
        if let offered = was.offered { was.desktop?.withdraw(offered) }
        was.desktop?.close()
        if let announced = was.announced { _ = try? await client.withdrawClipboard(id: announced.id) }
    }

    /// A new event session: what was announced went with the old one.
    func clipboardSessionStarted() async {
        clipboard.announced = nil
        clipboard.offered = nil
        if let last = clipboard.lastCopy { await announce(last.generation, last.reading) }
        if let record = try? await client.clipboard() { await accountClipboard(record) }
    }

    // MARK: - The desktop's clipboard changed

    func desktopClipboard(_ event: DesktopClipboardEvent) async {
        switch event {
        case .copied(let generation, let targets, let app):
            clipboard.lastLocalCopy = SystemClock.now()
            let config = loadConfiguration()
            let reading = ClipboardTargets.read(targets, excluded: config.clipboardExcludedTypes)
            if reading.secret {
                logger.info("a copy marked secret by a password manager is not announced")
                clipboard.lastCopy = nil
                await withdrawAnnounced()
            } else if let app, app.isExcluded(by: config.clipboardExcludedApps) {
                logger.info("a copy by an app excluded in clipboard-exclude-apps is not announced", metadata: ["app": "\(app.names.joined(separator: ", "))"])
                clipboard.lastCopy = nil
                await withdrawAnnounced()
            } else if await SessionLock.isLocked(loop: loop) == true {
                // Whoever copies behind a locked screen is not the user at the keyboard.
                logger.info("a copy made while the session is locked is not announced")
                clipboard.lastCopy = nil
                await withdrawAnnounced()
            } else if reading.formats.isEmpty {
                clipboard.lastCopy = nil
                await withdrawAnnounced()
            } else {
                clipboard.lastCopy = (generation, reading)
                await announce(generation, reading)
            }
        case .cleared:
            clipboard.lastCopy = nil
            await withdrawAnnounced()
        case .lost(let why):
            logger.warning("the clipboard is not shared any more", metadata: ["why": "\(why)"])
            clipboard.desktop = nil
            clipboard.problem = why
            clipboard.offered = nil
            clipboard.lastCopy = nil
            await withdrawAnnounced()
        }
    }

    private func announce(_ generation: UInt64, _ reading: ClipboardTargets.Reading) async {
        guard let session = sessionToken else { return }
        do {
            let record = try await client.announceClipboard(reading.formats, session: session)
            clipboard.announced = (record.id, generation, reading.targetFor)
            logger.debug("announced a copy", metadata: ["formats": "\(reading.formats.map(\.type).joined(separator: ", "))"])
        } catch {
            logger.notice("could not announce a copy", metadata: ["error": "\(error)"])
        }
    }

    private func withdrawAnnounced() async {
        guard let announced = clipboard.announced else { return }
        clipboard.announced = nil
        // That copy only: one made since (handoffctl copy, another app) is not ours to take back.
        _ = try? await client.withdrawClipboard(id: announced.id)
    }

    // MARK: - The account's copy changed

    /// The newest copy of the account: one made on another workstation is offered to the
    /// apps here; none takes back what was offered. A copy made here is the desktop's own
    /// already (the agent may not even have heard back from its announcement: events
    /// arrive while it waits), and one older than the last copy here would replace it.
    func accountClipboard(_ record: ClipboardRecord?, asked: Bool = false) async {
        guard let desktop = clipboard.desktop else { return }
        guard let record else {
            if let offered = clipboard.offered { desktop.withdraw(offered) }
            clipboard.offered = nil
            clipboard.heldBack = nil
            return
        }
        if record.local, record.id != clipboard.announced?.id, let offered = clipboard.offered {
            // Copied here by handoffctl or another app: what the desktop offered is not the
            // newest any more (its paste would be refused), so it goes.
            desktop.withdraw(offered)
            clipboard.offered = nil
        }
        if record.local { clipboard.heldBack = nil }
        guard !record.local, record.id != clipboard.offered else { return }
        if let copiedHere = clipboard.lastLocalCopy, record.copiedAt < copiedHere { return }
        clipboard.heldBack = nil
        if !asked, Self.desktopKind.readsWholeAtOnce(record.formats) {
            // It would cross the network now, whole, whether or not anything pastes it.
            if let offered = clipboard.offered { desktop.withdraw(offered) }
            clipboard.offered = nil
            clipboard.heldBack = record.id
            logger.info("another workstation's copy is not offered at once: this desktop would read it whole; Paste in the menu offers it",
                        metadata: ["formats": "\(record.formats.map(\.type).joined(separator: ", "))"])
            return
        }
        clipboard.offered = record.id
        let client = self.client, id = record.id.rawValue, logger = self.logger
        desktop.offer(record.id, formats: record.formats) { mime in
            let started = ContinuousClock.now
            let bytes = try await client.paste(type: mime, id: id) { stream in
                var all: [UInt8] = []
                while let piece = try await stream.reader.read() {
                    guard all.count + piece.readableBytes <= SessionAgent.pasteLimit else {
                        throw ClipboardFailure("the copy is larger than \(SessionAgent.pasteLimit >> 20) MiB, more than a paste here takes")
                    }
                    all += piece.readableBytesView
                }
                return all
            }
            let took = ContinuousClock.now - started
            logger.info("pasted another workstation's copy", metadata: ["type": "\(mime)", "bytes": "\(bytes.count)",
                                                                          "ms": "\(took.components.seconds * 1000 + took.components.attoseconds / 1_000_000_000_000_000)"])
            return bytes
        }
    }

    /// The user asked, from the tray, to paste here what another workstation copied: its
    /// copy becomes this desktop's clipboard again, whatever was copied here since (a copy
    /// kept from the others, a password, say). Returns why not, if it cannot.
    func offerHere(_ record: ClipboardRecord) async -> String? {
        guard clipboard.desktop != nil else {
            return "there is no clipboard to paste into here (\(clipboard.problem ?? "the clipboard source is off: handoffctl sources on clipboard")); `handoffctl paste` gives the copy"
        }
        if let offered = clipboard.offered { clipboard.desktop?.withdraw(offered) }
        clipboard.offered = nil
        clipboard.lastLocalCopy = nil
        await accountClipboard(record, asked: true)
        return clipboard.offered == record.id ? nil : "that copy could not be offered here"
    }

    // MARK: - Another workstation pastes our copy

    /// The bytes of the copy here in one format, read from the app that copied only now;
    /// refused when the clipboard changed since it was announced.
    func serveClipboard(_ id: ClipboardID, type: String, streamID: String) async {
        guard let desktop = clipboard.desktop, let announced = clipboard.announced, announced.id == id, let target = announced.targetFor[type] else {
            try? await client.refuseStream(streamID, reason: "the clipboard here changed since that copy was announced")
            return
        }
        var pieces = desktop.read(target, generation: announced.generation).makeAsyncIterator()
        let first: [UInt8]?
        do { first = try await pieces.next() } catch {
            try? await client.refuseStream(streamID, reason: "\(error)")
            return
        }
        do {
            try await client.acceptStream(streamID) { stream in
                if let first { try await stream.writer.write(first) }
                while let piece = try await pieces.next() { try await stream.writer.write(piece) }
                try await stream.writer.finish()
                while try await stream.reader.read() != nil {}
            }
        } catch {
            logger.notice("another workstation's paste of the copy here failed", metadata: ["error": "\(error)"])
        }
    }
}
