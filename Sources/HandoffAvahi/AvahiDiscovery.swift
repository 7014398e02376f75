import CAvahi
import Dispatch
import Logging

/// DNS-SD advertisement and discovery through avahi-daemon, on Avahi's own event thread
/// (AvahiThreadedPoll). Events arrive on `events`; the methods may be called from any thread
/// except from inside an Avahi callback (never the case for `events` consumers).
///
/// `publish` and `stop` take the poll lock and make short blocking D-Bus calls to avahi-daemon.
public final class AvahiDiscovery: Sendable {
    public let events: AsyncStream<AvahiEvent>

    private let session: AvahiSession
    private let continuation: AsyncStream<AvahiEvent>.Continuation
    private let lifecycle = LifecycleLock()
    private let phase = PhaseBox()
    private let watchQueue = DispatchQueue(label: "handoff.avahi.watch")

    /// `browseDomains`: unicast DNS-SD domains browsed besides `local` (Avahi's wide-area
    /// support, which the system's avahi-daemon must have enabled). `ipv4Only`: resolve
    /// every instance to an IPv4 address, found over either transport (KDE Connect's
    /// identities go over IPv4, and its own responder answers over IPv6 as well).
    public init(serviceType: String = "_handoff._tcp", browseDomains: [String] = [], ipv4Only: Bool = false, logger: Logger) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: AvahiEvent.self, bufferingPolicy: .bufferingNewest(1024))
        self.events = stream
        self.continuation = continuation
        self.session = AvahiSession(serviceType: serviceType, browseDomains: browseDomains, ipv4Only: ipv4Only, logger: logger, continuation: continuation)
    }

    deinit {
        stop()
    }

    /// Starts Avahi's event thread and client. Does not fail when avahi-daemon (or D-Bus) is not
    /// running: `.status(.unavailable(reason))` is reported and it connects once the daemon appears,
    /// and again after the daemon restarts. Calling it again while running does nothing.
    public func start() throws {
        try lifecycle.withLock {
            switch phase.value {
            case .running: return
            case .stopped: throw AvahiError("AvahiDiscovery was stopped; create a new one")
            case .idle: break
            }
            guard let poll = avahi_threaded_poll_new() else {
                throw AvahiError("cannot create Avahi's event loop")
            }
            // Released in stop(), after every Avahi object that could call back is freed.
            session.userdata = Unmanaged.passRetained(session).toOpaque()
            session.poll = poll
            // The poll thread is not running yet, so no locking here; callbacks fired from
            // inside avahi_client_new run on this thread.
            session.connect()
            let rc = avahi_threaded_poll_start(poll)
            guard rc >= 0 else {
                release(poll)
                phase.value = .stopped
                throw AvahiError("cannot start Avahi's event thread", code: rc)
            }
            phase.value = .running
        }
    }

    /// Publishes (first call) or updates the advertisement. TXT-only changes update the record in
    /// place; a new name or port re-registers. The latest advertisement is remembered and
    /// re-registered whenever avahi-daemon comes (back). Before `start()` it is just remembered.
    public func publish(_ ad: ServiceAdvertisement) {
        lifecycle.withLock {
            switch phase.value {
            case .idle:
                session.publish(ad)  // no client yet: only stored
            case .running:
                guard let poll = session.poll else { return }
                avahi_threaded_poll_lock(poll)
                session.publish(ad)
                avahi_threaded_poll_unlock(poll)
            case .stopped:
                return
            }
        }
    }

    /// Whether to keep reporting TXT changes of a resolved browse result (as new `.found`
    /// events) or not (the default: its resolver closes at its first answer). Each open
    /// resolver keeps avahi-daemon querying the network for that instance. A result is
    /// reported `.removed` when it goes either way; a new one (a new rotation, say) starts
    /// unwatched. Unknown keys are ignored.
    ///
    /// Returns at once: opening or closing a resolver is a D-Bus round trip to avahi-daemon,
    /// which took up to seconds with 32 hosts starting together, so it is done in order on a
    /// queue of its own and the caller (the peer service's actor) never waits for it.
    public func watchChanges(of key: ServiceKey, _ watch: Bool) {
        watchQueue.async { [self] in
            lifecycle.withLock {
                guard phase.value == .running, let poll = session.poll else { return }
                avahi_threaded_poll_lock(poll)
                session.watch(key, watch)
                avahi_threaded_poll_unlock(poll)
            }
        }
    }

    /// Withdraws the service, frees everything and finishes `events`. Idempotent.
    public func stop() {
        lifecycle.withLock {
            if phase.value == .running, let poll = session.poll {
                avahi_threaded_poll_stop(poll)  // joins the thread; must not hold the poll lock
                release(poll)
            }
            phase.value = .stopped
            continuation.finish()
        }
    }

    /// With the poll thread stopped: frees the client (withdrawing our service), the poll and
    /// the callbacks' reference.
    private func release(_ poll: OpaquePointer) {
        session.teardown()
        session.poll = nil
        avahi_threaded_poll_free(poll)
        if let userdata = session.userdata {
            Unmanaged<AvahiSession>.fromOpaque(userdata).release()
            session.userdata = nil
        }
    }
}

/// Lifecycle phase, read and written only under `lifecycle`.
private final class PhaseBox: @unchecked Sendable {
    enum Phase { case idle, running, stopped }
    var value = Phase.idle
}
