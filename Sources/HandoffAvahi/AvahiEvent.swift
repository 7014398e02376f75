/// What `AvahiDiscovery.events` delivers.
public enum AvahiEvent: Sendable, Equatable {
    /// avahi-daemon availability changed.
    case status(DiscoveryStatus)
    /// A service was resolved, or its address/port/TXT changed (a TXT update arrives as another
    /// `.found` for the same key).
    case found(DiscoveredService)
    /// The service went away. Also sent for every known service when avahi-daemon goes away,
    /// since the browse results are lost with it (they are found again after it comes back).
    case removed(ServiceKey)
    /// Our service is established under this name (again after a collision rename, or after
    /// avahi-daemon came back).
    case published(name: String)
}

public enum DiscoveryStatus: Sendable, Equatable {
    case running
    /// A human-readable reason, e.g. "avahi-daemon is not running (waiting for it)".
    case unavailable(String)
}
