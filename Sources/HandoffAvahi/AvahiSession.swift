import CAvahi
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The Avahi handles and everything derived from them.
///
/// Thread rule: touched only on the poll thread (callbacks, which run with the poll lock held),
/// by other threads between avahi_threaded_poll_lock/unlock, or while the poll thread is not
/// running. Methods here never lock: they run on one of those paths already.
final class AvahiSession: @unchecked Sendable {
    let serviceType: String
    let logger: Logger
    let continuation: AsyncStream<AvahiEvent>.Continuation

    /// AvahiThreadedPoll*; set by AvahiDiscovery.start.
    var poll: OpaquePointer?
    /// Unmanaged reference to self, handed to every Avahi callback.
    var userdata: UnsafeMutableRawPointer?

    var client: OpaquePointer?
    var browser: OpaquePointer?
    /// Unicast DNS-SD domains browsed besides `local`, and their browsers.
    let browseDomains: [String]
    /// Resolve every instance to an IPv4 address, whichever transport it was found on
    /// (KDE Connect's own responder answers over IPv6 with an IPv4 address).
    let ipv4Addresses: Bool
    var wideAreaBrowsers: [OpaquePointer] = []
    var group: OpaquePointer?
    /// True while the group holds our service (reset and collisions empty it).
    var groupFilled = false
    /// The advertisement the group holds and the name it is published under.
    var registered: ServiceAdvertisement?
    var registeredName: String?
    /// The SRV target's own host label in use (nil: Avahi's host name).
    var registeredHost: String?
    /// The latest advertisement asked for; what gets (re)registered.
    var advertisement: ServiceAdvertisement?

    /// Resolvers at work: one per instance until it answers, then only for the results in
    /// `watched`, whose TXT changes arrive as new FOUND events.
    var resolvers: [ServiceKey: OpaquePointer] = [:]
    var watched: Set<ServiceKey> = []
    /// Every browse result present; an instance is resolved through one of its keys.
    var browsed: Set<ServiceKey> = []
    /// What was last reported as `.found`, to drop identical repeats and to know what to remove.
    var services: [ServiceKey: DiscoveredService] = [:]

    var status: DiscoveryStatus?
    /// Pending reconnect timer, only while the D-Bus system bus itself cannot be reached.
    var retryTimer: OpaquePointer?
    var retryDelayMilliseconds = 0

    init(serviceType: String, browseDomains: [String] = [], ipv4Only: Bool = false, logger: Logger, continuation: AsyncStream<AvahiEvent>.Continuation) {
        self.serviceType = serviceType
        self.browseDomains = browseDomains
        self.ipv4Addresses = ipv4Only
        self.logger = logger
        self.continuation = continuation
    }

    // MARK: Client

    /// Creates the client. NO_FAIL keeps it alive without avahi-daemon (state CONNECTING), but
    /// avahi_client_new still fails when the D-Bus system bus is unreachable: then retry later.
    func connect() {
        guard let poll else { return }
        var error: Int32 = 0
        let created = avahi_client_new(
            avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, AvahiCallbacks.client, userdata, &error)
        guard let created else {
            let delay = nextRetryDelay()
            // libdbus reports a missing bus socket as NO_DAEMON ("Daemon not running"), which
            // would wrongly point at avahi-daemon.
            let detail = error == Int32(AVAHI_ERR_NO_DAEMON) ? "" : " (\(AvahiError.text(error)))"
            setStatus(.unavailable(
                "cannot connect to the D-Bus system bus\(detail); is dbus running? retrying in \(delay / 1000) s"))
            scheduleRetry(milliseconds: delay)
            return
        }
        // The callback may already have run (and set client) inside avahi_client_new.
        client = created
        retryDelayMilliseconds = 0
    }

    func clientChanged(_ c: OpaquePointer, _ state: AvahiClientState) {
        client = c
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            setStatus(.running)
            startBrowsing(c)
            registerIfNeeded(c)
        case AVAHI_CLIENT_S_REGISTERING, AVAHI_CLIENT_S_COLLISION:
            // The host name is being (re)established; records must be re-added once RUNNING.
            resetGroup()
        case AVAHI_CLIENT_CONNECTING:
            setStatus(.unavailable(
                "avahi-daemon is not running (waiting for it; start it, e.g. `systemctl start avahi-daemon`)"))
        case AVAHI_CLIENT_FAILURE:
            let error = avahi_client_errno(c)
            dropClient(c)
            if error == Int32(AVAHI_ERR_DISCONNECTED) {
                // avahi-daemon (or the bus) went away: a fresh NO_FAIL client waits for it and
                // reports the status (CONNECTING, or RUNNING if the daemon is back already).
                logger.notice("lost the connection to avahi-daemon; reconnecting")
                connect()
            } else {
                let delay = nextRetryDelay()
                setStatus(.unavailable("Avahi client failed (\(AvahiError.text(error))); retrying in \(delay / 1000) s"))
                scheduleRetry(milliseconds: delay)
            }
        default:
            break
        }
    }

    /// Frees the client and with it the group, browser and resolvers (avahi_client_free does).
    func dropClient(_ c: OpaquePointer) {
        avahi_client_free(c)
        client = nil
        browser = nil
        wideAreaBrowsers = []
        group = nil
        groupFilled = false
        registered = nil
        registeredName = nil
        registeredHost = nil
        resolvers.removeAll()
        browsed.removeAll()
        watched.removeAll()  // found again once the daemon is back, and decided again
        for key in services.keys { continuation.yield(.removed(key)) }
        services.removeAll()
    }

    /// Frees everything; the poll thread must be stopped.
    func teardown() {
        if let retryTimer, let poll {
            avahi_threaded_poll_get(poll).pointee.timeout_free(retryTimer)
            self.retryTimer = nil
        }
        if let client { dropClient(client) }
    }

    func setStatus(_ new: DiscoveryStatus) {
        guard new != status else { return }
        status = new
        switch new {
        case .running: logger.info("avahi-daemon is available")
        case .unavailable(let reason): logger.warning("Avahi unavailable: \(reason)")
        }
        continuation.yield(.status(new))
    }

    // MARK: Retry (only without a D-Bus system bus)

    func nextRetryDelay() -> Int {
        retryDelayMilliseconds = min(max(retryDelayMilliseconds * 2, 1000), 30_000)
        return retryDelayMilliseconds
    }

    func scheduleRetry(milliseconds: Int) {
        guard let poll, retryTimer == nil else { return }
        let api = avahi_threaded_poll_get(poll)!
        var when = timeval()
        gettimeofday(&when, nil)
        let micros = Int(when.tv_usec) + (milliseconds % 1000) * 1000
        when.tv_sec += (milliseconds / 1000) + micros / 1_000_000
        when.tv_usec = .init(micros % 1_000_000)
        retryTimer = api.pointee.timeout_new(api, &when, AvahiCallbacks.retry, userdata)
    }

    func retryFired() {
        if let retryTimer, let poll {
            avahi_threaded_poll_get(poll).pointee.timeout_free(retryTimer)
        }
        retryTimer = nil
        if client == nil { connect() }
    }
}
