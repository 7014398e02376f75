import CAvahi

/// Registering our service: add, TXT update, re-add, collision renames. Poll thread or poll lock.
extension AvahiSession {
    func publish(_ ad: ServiceAdvertisement) {
        advertisement = ad
        guard let client, avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING else {
            return  // registered when the client reaches RUNNING
        }
        if let group, groupFilled, let registered, let name = registeredName {
            if registered == ad { return }
            if registered.name == ad.name && registered.port == ad.port && registered.host == ad.host && registered.addresses == ad.addresses {
                // Must match the add exactly (iface, proto, flags, name as published, type, domain).
                let txt = TXTRecord.makeList(ad.txt, logger: logger)
                defer { avahi_string_list_free(txt) }
                let rc = avahi_entry_group_update_service_txt_strlst(
                    group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                    AVAHI_PUBLISH_NO_COOKIE, name, serviceType, nil, txt)
                if rc >= 0 {
                    self.registered = ad
                    logger.debug("updated TXT", metadata: ["name": "\(name)"])
                    return
                }
                // E.g. NOT_FOUND while a collision rename is under way: fall back to re-adding.
                logger.notice("TXT update failed (\(AvahiError.text(rc))); re-adding the service")
            }
            resetGroup()
        }
        registerIfNeeded(client)
    }

    func resetGroup() {
        if let group { avahi_entry_group_reset(group) }
        groupFilled = false
    }

    func registerIfNeeded(_ c: OpaquePointer) {
        guard let ad = advertisement, !groupFilled else { return }
        if group == nil {
            // The callback fires inside avahi_entry_group_new; it uses its own argument.
            group = avahi_entry_group_new(c, AvahiCallbacks.group, userdata)
            if group == nil {
                logger.error("cannot create an Avahi entry group: \(AvahiError.text(avahi_client_errno(c)))")
                return
            }
        }
        add(ad, as: ad.name, host: ad.host, to: group!)
    }

    /// Adds the advertisement's own host name with its addresses (no reverse records: those
    /// belong to Avahi's host name). Returns the name to use as the SRV target, or nil to
    /// use Avahi's host name when none of the addresses could be added.
    func addHost(_ ad: ServiceAdvertisement, as label: String, to g: OpaquePointer) -> String? {
        guard let client, !ad.addresses.isEmpty else { return nil }
        let domain = avahi_client_get_domain_name(client).map { String(cString: $0) } ?? "local"
        let name = label + "." + domain
        var added = 0
        for a in ad.addresses {
            var address = AvahiAddress()
            guard avahi_address_parse(a.address, AvahiProtocol(AVAHI_PROTO_UNSPEC), &address) != nil else { continue }
            let rc = avahi_entry_group_add_address(g, AvahiIfIndex(a.interfaceIndex), address.proto, AVAHI_PUBLISH_NO_REVERSE, name, &address)
            if rc >= 0 { added += 1 } else {
                logger.debug("address not published", metadata: ["address": "\(a.address)", "error": "\(AvahiError.text(rc))"])
            }
        }
        if added == 0 {
            logger.notice("no address could be published under the advertisement's own host name; using Avahi's")
            return nil
        }
        return name
    }

    /// Adds and commits on `g`; a name already taken locally is renamed right away.
    func add(_ ad: ServiceAdvertisement, as requestedName: String, host: String?, to g: OpaquePointer) {
        let txt = TXTRecord.makeList(ad.txt, logger: logger)
        defer { avahi_string_list_free(txt) }
        var name = requestedName
        let hostLabel = host
        for _ in 0..<20 {
            let target = hostLabel.flatMap { addHost(ad, as: $0, to: g) }
            var rc = avahi_entry_group_add_service_strlst(
                g, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                AVAHI_PUBLISH_NO_COOKIE, name, serviceType, nil, target, ad.port, txt)
            if rc == Int32(AVAHI_ERR_COLLISION) {
                name = alternativeName(name)
                avahi_entry_group_reset(g)
                continue
            }
            if rc >= 0 { rc = avahi_entry_group_commit(g) }
            if rc < 0 {
                logger.error("cannot publish \(serviceType) \"\(name)\": \(AvahiError.text(rc))")
                avahi_entry_group_reset(g)
                return
            }
            registered = ad
            registeredName = name
            registeredHost = hostLabel
            groupFilled = true
            logger.debug("registering", metadata: ["name": "\(name)", "port": "\(ad.port)", "host": "\(target ?? "(Avahi's)")"])
            return
        }
        logger.error("cannot publish \(serviceType): no free name near \"\(requestedName)\"")
    }

    func alternativeHostName(_ name: String) -> String {
        guard let alt = avahi_alternative_host_name(name) else { return name + "-2" }
        defer { avahi_free(alt) }
        return String(cString: alt)
    }

    func alternativeName(_ name: String) -> String {
        guard let alt = avahi_alternative_service_name(name) else { return name + " #2" }
        defer { avahi_free(alt) }
        return String(cString: alt)
    }

    func groupChanged(_ g: OpaquePointer, _ state: AvahiEntryGroupState) {
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            if let registeredName {
                logger.info("published \(serviceType) \"\(registeredName)\"")
                continuation.yield(.published(name: registeredName))
            }
        case AVAHI_ENTRY_GROUP_COLLISION:
            // Someone else holds the name: rename and re-add on the same group.
            guard let ad = advertisement, let current = registeredName else { return }
            let next = alternativeName(current)
            logger.notice("service name \"\(current)\" is taken; trying \"\(next)\"")
            avahi_entry_group_reset(g)
            groupFilled = false
            // The host name may be what collided: move it along too.
            add(ad, as: next, host: registeredHost.map(alternativeHostName), to: g)
        case AVAHI_ENTRY_GROUP_FAILURE:
            let error = avahi_client_errno(avahi_entry_group_get_client(g))
            logger.error("publishing failed: \(AvahiError.text(error))")
        default:
            break
        }
    }
}
