import HandoffControlAPI
import HandoffCore
import HandoffPeerProtocol
import Logging
import ServiceLifecycle

/// The clipboard across the account (Docs/PeerProtocol.md §19, LocalAPI.md §23): a copy
/// here is announced to linked peers as formats and sizes, never bytes; a paste on a peer
/// asks for one format over a stream connection (`PeerService`'s streams), and only then
/// do the bytes leave. The decisions are `ClipboardTable`'s; this service performs them:
/// what the links hear, what event sessions hear, and the one timer of the newest copy's end.
actor ClipboardService: Service, LinkListener, CustomStringConvertible {
    struct Settings: Sendable {
        /// Copies announced and taken at all (`clipboard =`).
        var enabled = true
        /// How long a copy may be pasted on another workstation.
        var lifetimeSeconds: Int64 = 600
        /// A format larger than this is neither announced nor taken (`clipboard-max-bytes`).
        var maximumFormatBytes: Int64 = 64 << 20
        /// Bytes handoffd keeps itself for `handoffctl copy` (`clipboard-held-max-bytes`).
        var maximumHeldBytes = 16 << 20

        init() {}

        init(_ config: DaemonConfiguration) {
            enabled = config.clipboard
            lifetimeSeconds = config.clipboardLifetimeSeconds
            maximumFormatBytes = config.clipboardMaximumFormatBytes
            maximumHeldBytes = config.clipboardMaximumHeldBytes
        }
    }

    static let off = HandoffError(.conflict, code: "clipboard_off",
                                  message: "the clipboard is turned off on this workstation (clipboard = no in handoffd.conf)")

    nonisolated let settings: Settings
    nonisolated var description: String { "clipboard" }
    private let own: PeerDevice
    private let isSessionOpen: @Sendable (String) async -> Bool
    private let events: AsyncStream<ControlEvent>.Continuation
    private let clock: any WallClock
    private let timers: any Timers
    private let logger: Logger
    private var table: ClipboardTable
    private var timer: ScheduledTimer?
    private var links = LinkedPeers()
    private var stopped = false

    /// `isSessionOpen`: whether an event session is open (an app's copy is served by it).
    /// `events`: the control API's peer events.
    init(settings: Settings, own: PeerDevice, isSessionOpen: @escaping @Sendable (String) async -> Bool,
         events: AsyncStream<ControlEvent>.Continuation, clock: any WallClock, timers: any Timers, logger: Logger) {
        self.settings = settings
        self.own = own
        self.isSessionOpen = isSessionOpen
        self.events = events
        self.clock = clock
        self.timers = timers
        self.logger = logger
        table = ClipboardTable(lifetimeSeconds: settings.lifetimeSeconds, maximumFormatBytes: settings.maximumFormatBytes)
    }

    /// Nothing runs until asked; at the daemon's stop the copy's timer goes.
    func run() async throws {
        try? await gracefulShutdown()
        stop()
    }

    func stop() {
        stopped = true
        timer?.cancel()
        timer = nil
    }

    // MARK: - Local API

    func record() -> ClipboardRecord? { table.record(at: clock.now()) }

    /// An app copied and will serve the bytes itself when asked (`clipboard-requested`).
    func announce(_ formats: [ClipboardFormat], session: String) async throws(HandoffError) -> ClipboardRecord {
        guard settings.enabled else { throw Self.off }
        guard await isSessionOpen(session) else { throw HandoffError.unknownSession(session) }
        return try copy(formats, holder: .session(session))
    }

    /// Bytes copied with the request (`handoffctl copy`): handoffd keeps and serves them.
    func copyHeld(_ bytes: [UInt8], type: String) throws(HandoffError) -> ClipboardRecord {
        guard settings.enabled else { throw Self.off }
        return try copy([ClipboardFormat(type: type, size: Int64(bytes.count))], holder: .bytes(bytes))
    }

    private func copy(_ formats: [ClipboardFormat], holder: ClipboardHolder) throws(HandoffError) -> ClipboardRecord {
        let now = clock.now()
        let actions: [ClipboardTable.Action]
        do {
            (_, actions) = try table.copy(formats, holder: holder, device: own, at: now)
        } catch {
            throw HandoffError(.invalid, code: error.code, message: error.message)
        }
        perform(actions)
        logger.info("copied", metadata: ["formats": "\(formats.map { "\($0.type) (\($0.size.map { "\($0) B" } ?? "size not known"))" }.joined(separator: ", "))",
                                         "held": "\(holder.isBytes ? "by handoffd" : "by an app")"])
        return table.record(at: now)!
    }

    /// Our copy is withdrawn (cleared, or the app's clipboard changed to something not to
    /// share); with `id`, only if that is still our copy. The newest copy afterwards.
    func withdraw(_ id: ClipboardID? = nil) -> ClipboardRecord? {
        let now = clock.now()
        perform(table.withdraw(id, at: now))
        return table.record(at: now)
    }

    /// An event session ended: a copy its app held is gone.
    func sessionEnded(_ token: String) {
        perform(table.sessionEnded(token, at: clock.now()))
    }

    // MARK: - Links

    func linkUp(_ link: any LinkEnd) { links.up(link) }

    /// The link subscribed: a version 3 peer hears our copy, if we have one.
    func subscribed(_ link: any LinkEnd) {
        guard settings.enabled, link.version >= 3, let offer = table.ourOffer(at: clock.now()) else { return }
        link.send(.clipboard(offer))
    }

    func heard(_ offer: ClipboardOffer?, from link: any LinkEnd) {
        guard settings.enabled else { return }
        let (actions, dropped) = table.received(offer, from: link.deviceID, device: PeerDevice(id: link.deviceID.description, name: link.deviceName), at: clock.now())
        let left = (offer?.droppedFormats ?? 0) + dropped
        if left > 0 {
            logger.notice("left out formats of a peer's copy", metadata: ["peer": "\(link.deviceName)", "formats": "\(left)",
                                                                          "why": "malformed, repeated, beyond \(ClipboardOffer.maximumFormats), or over clipboard-max-bytes"])
        }
        perform(actions)
    }

    /// The peer's copy can no longer be pasted here.
    func linkDown(_ link: any LinkEnd) {
        guard links.down(link) else { return }
        perform(table.linkEnded(link.deviceID, at: clock.now()))
    }

    // MARK: - Pastes

    /// Where a paste here reads the bytes from.
    func pasteTarget(id: ClipboardID?, type: String?) -> Result<ClipboardTable.PasteTarget, StreamFailure> {
        guard settings.enabled else { return .failure(StreamFailure(Self.off)) }
        do { return .success(try table.pasteTarget(id: id, type: type, at: clock.now())) } catch {
            return .failure(StreamFailure(error.code, error.message))
        }
    }

    /// Who serves our copy's bytes in `type` to a peer that pastes it.
    func source(_ clip: ClipboardID, type: String) -> Result<ClipboardHolder, StreamFailure> {
        guard settings.enabled else { return .failure(StreamFailure(Self.off)) }
        do { return .success(try table.source(of: clip, type: type, at: clock.now()).0) } catch {
            return .failure(StreamFailure(error.code, error.message))
        }
    }

    // MARK: - Performing

    private func expire() {
        timer = nil
        perform(table.expire(at: clock.now()))
    }

    private func perform(_ actions: [ClipboardTable.Action]) {
        for action in actions {
            switch action {
            case .announce(let offer):
                for link in links.all where link.version >= 3 { link.send(.clipboard(offer)) }
            case .emit(let record):
                events.yield(.clipboard(record))
            }
        }
        // One timer, for the newest copy's end.
        timer?.cancel()
        timer = nil
        guard !stopped, let due = table.nextExpiry else { return }
        let wait = max(0, clock.now().nanoseconds(until: due))
        timer = timers.schedule(in: .nanoseconds(wait)) { Task { await self.expire() } }
    }
}

extension ClipboardHolder {
    var isBytes: Bool { if case .bytes = self { true } else { false } }
}
