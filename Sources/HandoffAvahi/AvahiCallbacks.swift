import CAvahi

/// The C callbacks. They are `static let` closures in a nonisolated enum on purpose: closures
/// written in a @MainActor context crash with SIGILL when Avahi calls them (see PITFALLS §1).
/// Each runs on the poll thread with the poll lock held, and only forwards to the session.
enum AvahiCallbacks {
    static func session(_ userdata: UnsafeMutableRawPointer?) -> AvahiSession? {
        userdata.map { Unmanaged<AvahiSession>.fromOpaque($0).takeUnretainedValue() }
    }

    static let client: AvahiClientCallback = { c, state, userdata in
        guard let c, let session = session(userdata) else { return }
        session.clientChanged(c, state)
    }

    static let group: AvahiEntryGroupCallback = { g, state, userdata in
        guard let g, let session = session(userdata) else { return }
        session.groupChanged(g, state)
    }

    static let browse: AvahiServiceBrowserCallback = { b, interface, proto, event, name, type, domain, _, userdata in
        guard let b, let session = session(userdata) else { return }
        session.browseEvent(b, interface: interface, protocol: proto, event: event, name: name, type: type, domain: domain)
    }

    static let resolve: AvahiServiceResolverCallback = {
        r, interface, proto, event, name, _, domain, hostName, address, port, txt, _, userdata in
        guard let r, let session = session(userdata) else { return }
        session.resolveEvent(
            r, interface: interface, protocol: proto, event: event, name: name, domain: domain,
            hostName: hostName, address: address, port: port, txt: txt)
    }

    static let retry: AvahiTimeoutCallback = { _, userdata in
        session(userdata)?.retryFired()
    }
}
