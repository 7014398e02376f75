import CAvahi

/// Browsing and resolving peers' services. Poll thread only (callbacks).
extension AvahiSession {
    func startBrowsing(_ c: OpaquePointer) {
        guard browser == nil else { return }
        browser = avahi_service_browser_new(
            c, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), serviceType, nil,
            AvahiLookupFlags(0), AvahiCallbacks.browse, userdata)
        if browser == nil {
            logger.error("cannot browse \(serviceType): \(AvahiError.text(avahi_client_errno(c)))")
        }
        for domain in browseDomains {
            let b = avahi_service_browser_new(
                c, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), serviceType, domain,
                AvahiLookupFlags(0), AvahiCallbacks.browse, userdata)
            if let b { wideAreaBrowsers.append(b) } else {
                logger.error("cannot browse \(serviceType) in \(domain): \(AvahiError.text(avahi_client_errno(c)))",
                             metadata: ["hint": "unicast DNS-SD needs enable-wide-area=yes in avahi-daemon.conf and a DNS server in /etc/resolv.conf"])
            }
        }
    }

    func browseEvent(
        _ b: OpaquePointer, interface: AvahiIfIndex, protocol proto: AvahiProtocol, event: AvahiBrowserEvent,
        name: UnsafePointer<CChar>?, type: UnsafePointer<CChar>?, domain: UnsafePointer<CChar>?
    ) {
        switch event {
        case AVAHI_BROWSER_NEW, AVAHI_BROWSER_REMOVE:
            guard let name, let type, let domain else { return }
            let key = ServiceKey(
                interfaceIndex: interface, ipv6: proto == AvahiProtocol(AVAHI_PROTO_INET6),
                name: String(cString: name), domain: String(cString: domain))
            guard let c = avahi_service_browser_get_client(b) else { return }
            if event == AVAHI_BROWSER_NEW {
                browsed.insert(key)
                // One resolver per instance and interface: whichever address family reports
                // it first. The other would find the same service at the same host, and each
                // resolver is a blocking round trip to avahi-daemon and more queries on the
                // network (bench-scale: with 32 hosts both add up to seconds).
                // Wanting IPv4 addresses from both transports, each is asked: avahi answers
                // A queries over IPv4 only (publish-a-on-ipv6=no), KDE Connect's responder
                // over IPv6 as well.
                guard resolvers[key] == nil, ipv4Addresses || !isResolved(key.sibling) else { return }
                resolve(key, client: c)
            } else {
                browsed.remove(key)
                if let r = resolvers.removeValue(forKey: key) { avahi_service_resolver_free(r) }
                watched.remove(key)
                if services.removeValue(forKey: key) != nil { continuation.yield(.removed(key)) }
                // Still there over the other family (an address went): resolve it that way.
                if browsed.contains(key.sibling), !isResolved(key.sibling) { resolve(key.sibling, client: c) }
            }
        case AVAHI_BROWSER_FAILURE:
            logger.warning("browsing \(serviceType) failed: \(AvahiError.text(avahi_client_errno(avahi_service_browser_get_client(b))))")
        default:
            break  // ALL_FOR_NOW, CACHE_EXHAUSTED
        }
    }

    func isResolved(_ key: ServiceKey) -> Bool { resolvers[key] != nil || services[key] != nil }

    func resolve(_ key: ServiceKey, client c: OpaquePointer) {
        let proto = AvahiProtocol(key.ipv6 ? AVAHI_PROTO_INET6 : AVAHI_PROTO_INET)
        // aprotocol = protocol: the IPv4 result resolves to IPv4, the IPv6 one to IPv6
        // (unless only IPv4 addresses are wanted).
        let r = avahi_service_resolver_new(
            c, AvahiIfIndex(key.interfaceIndex), proto, key.name, serviceType, key.domain,
            ipv4Addresses ? AvahiProtocol(AVAHI_PROTO_INET) : proto,
            AvahiLookupFlags(0), AvahiCallbacks.resolve, userdata)
        if let r {
            resolvers[key] = r
        } else {
            logger.warning("cannot resolve \"\(key.name)\": \(AvahiError.text(avahi_client_errno(c)))")
        }
    }

    /// Whether a resolved browse result's resolver stays open to report TXT changes, or
    /// closes once it has answered (the default). An open resolver keeps avahi-daemon asking
    /// the network for the instance's SRV, TXT and address records (at 1, 2, 4, ... s, up to
    /// hourly), and every other avahi-daemon on the link has to read those queries: with 32
    /// hosts starting together, resolvers kept open took their avahi-daemons most of two
    /// cores for half a minute (bench-scale). One closed at its first answer mostly asks
    /// nothing: the announcements filled the cache, and avahi-daemon holds a new query back
    /// for 100 ms and drops it when its asker goes.
    func watch(_ key: ServiceKey, _ on: Bool) {
        if on {
            guard services[key] != nil, watched.insert(key).inserted, resolvers[key] == nil, let client else { return }
            resolve(key, client: client)  // answers from avahi-daemon's cache; repeats are dropped
        } else {
            guard watched.remove(key) != nil, services[key] != nil else { return }
            if let r = resolvers.removeValue(forKey: key) { avahi_service_resolver_free(r) }
        }
    }

    func resolveEvent(
        _ r: OpaquePointer, interface: AvahiIfIndex, protocol proto: AvahiProtocol, event: AvahiResolverEvent,
        name: UnsafePointer<CChar>?, domain: UnsafePointer<CChar>?, hostName: UnsafePointer<CChar>?,
        address: UnsafePointer<AvahiAddress>?, port: UInt16, txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        guard let name, let domain else { return }
        let key = ServiceKey(
            interfaceIndex: interface, ipv6: proto == AvahiProtocol(AVAHI_PROTO_INET6),
            name: String(cString: name), domain: String(cString: domain))
        guard event == AVAHI_RESOLVER_FOUND, let address else {
            // Keep the resolver: it stays subscribed and may report the service later.
            let error = avahi_client_errno(avahi_service_resolver_get_client(r))
            logger.debug("resolving \"\(key.name)\" failed: \(AvahiError.text(error))")
            return
        }
        let service = DiscoveredService(
            key: key, hostName: hostName.map { String(cString: $0) } ?? "",
            address: AddressFormatting.string(address, interface: interface), port: port,
            txt: TXTRecord.dictionary(txt))
        if services[key] != service {
            services[key] = service
            continuation.yield(.found(service))
        }
        if !watched.contains(key), resolvers[key] == r {
            // Nobody wants its changes: this answer is all it was open for.
            resolvers[key] = nil
            avahi_service_resolver_free(r)
        }
    }
}
