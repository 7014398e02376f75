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
            if registered.name == ad.name && registered.port == ad.port {
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
        add(ad, as: ad.name, to: group!)
    }

    /// Adds and commits on `g`; a name already taken locally is renamed right away.
    func add(_ ad: ServiceAdvertisement, as requestedName: String, to g: OpaquePointer) {
        let txt = TXTRecord.makeList(ad.txt, logger: logger)
        defer { avahi_string_list_free(txt) }
        var name = requestedName
        for _ in 0..<20 {
            var rc = avahi_entry_group_add_service_strlst(
                g, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                AVAHI_PUBLISH_NO_COOKIE, name, serviceType, nil, nil, ad.port, txt)
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
            groupFilled = true
            logger.debug("registering", metadata: ["name": "\(name)", "port": "\(ad.port)"])
            return
        }
        logger.error("cannot publish \(serviceType): no free name near \"\(requestedName)\"")
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
            add(ad, as: next, to: g)
        case AVAHI_ENTRY_GROUP_FAILURE:
            let error = avahi_client_errno(avahi_entry_group_get_client(g))
            logger.error("publishing failed: \(AvahiError.text(error))")
        default:
            break
        }
    }
}
