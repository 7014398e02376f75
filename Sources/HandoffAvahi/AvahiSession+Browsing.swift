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
            if event == AVAHI_BROWSER_NEW {
                guard resolvers[key] == nil else { return }
                // aprotocol = protocol: the IPv4 result resolves to IPv4, the IPv6 one to IPv6.
                let r = avahi_service_resolver_new(
                    avahi_service_browser_get_client(b), interface, proto, name, type, domain, proto,
                    AvahiLookupFlags(0), AvahiCallbacks.resolve, userdata)
                if let r {
                    resolvers[key] = r
                } else {
                    logger.warning("cannot resolve \"\(key.name)\": \(AvahiError.text(avahi_client_errno(avahi_service_browser_get_client(b))))")
                }
            } else {
                if let r = resolvers.removeValue(forKey: key) { avahi_service_resolver_free(r) }
                if services.removeValue(forKey: key) != nil { continuation.yield(.removed(key)) }
            }
        case AVAHI_BROWSER_FAILURE:
            logger.warning("browsing \(serviceType) failed: \(AvahiError.text(avahi_client_errno(avahi_service_browser_get_client(b))))")
        default:
            break  // ALL_FOR_NOW, CACHE_EXHAUSTED
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
        guard services[key] != service else { return }
        services[key] = service
        continuation.yield(.found(service))
    }
}
