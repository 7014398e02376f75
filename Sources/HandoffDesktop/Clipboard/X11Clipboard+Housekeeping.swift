import CXCB
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Stale conversions and transfers given up, the server's time, and atoms by name: on the
/// X thread, as all of X11Clipboard.
extension X11Clipboard {
    func expireStale() {
        let now = ContinuousClock.now
        for (property, read) in reads where now - read.touched > Self.stale {
            finish(property, Failure("the app that copied did not hand over its data in time"))
        }
        for (key, t) in transfers where now - t.touched > Self.stale { ended(key) }
    }

    /// A server timestamp for owning the selection (ICCCM asks for a real one): a
    /// zero-length append to our own property, and the time of its PropertyNotify. Other
    /// events read meanwhile are handled afterwards, in order.
    func serverTime() -> xcb_timestamp_t {
        let property = atom("HANDOFF_TIME")
        xcb_change_property(connection, UInt8(XCB_PROP_MODE_APPEND.rawValue), window, property, xcb_atom_t(XCB_ATOM_STRING.rawValue), 8, 0, nil)
        xcb_flush(connection)
        while let event = xcb_wait_for_event(connection) {
            if event.pointee.response_type & 0x7F == UInt8(XCB_PROPERTY_NOTIFY) {
                let e = UnsafeRawPointer(event).load(as: xcb_property_notify_event_t.self)
                if e.window == window && e.atom == property {
                    free(event)
                    return e.time
                }
            }
            deferred.append(event)
        }
        return 0  // the connection broke: the loop notices
    }

    func atom(_ name: String) -> xcb_atom_t {
        if let a = atoms[name] { return a }
        let cookie = name.withCString { xcb_intern_atom(connection, 0, UInt16(strlen($0)), $0) }
        guard let reply = xcb_intern_atom_reply(connection, cookie, nil) else { return 0 }
        defer { free(reply) }
        atoms[name] = reply.pointee.atom
        names[reply.pointee.atom] = name
        return reply.pointee.atom
    }

    func name(_ atom: xcb_atom_t) -> String { atomNames([atom]).first ?? "?" }

    /// Names of atoms, asked for together (one round trip for all the unknown ones).
    func atomNames(_ list: [xcb_atom_t]) -> [String] {
        let unknown = Array(Set(list.filter { names[$0] == nil && $0 != 0 }))
        let cookies = unknown.map { xcb_get_atom_name(connection, $0) }
        for (atom, cookie) in zip(unknown, cookies) {
            guard let reply = xcb_get_atom_name_reply(connection, cookie, nil) else { continue }
            let length = Int(xcb_get_atom_name_name_length(reply))
            let text = String(decoding: UnsafeRawBufferPointer(start: xcb_get_atom_name_name(reply), count: length), as: UTF8.self)
            free(reply)
            names[atom] = text
            atoms[text] = atom
        }
        return list.compactMap { names[$0] }
    }
}
