import CXCB
import HandoffCore
import Logging

/// Owning CLIPBOARD to offer another workstation's copy to the apps here: the targets at
/// once, the bytes fetched only when an app pastes, large ones in INCR pieces. On the X
/// thread, as all of X11Clipboard.
extension X11Clipboard {
    func takeOwnership(_ id: ClipboardID, _ formats: [ClipboardFormat], _ fetch: @escaping Fetch) {
        var targets: [xcb_atom_t: String] = [:]
        for (target, mime) in ClipboardTargets.offered(formats) { targets[atom(target)] = mime }
        let time = serverTime()
        xcb_set_selection_owner(connection, window, atom("CLIPBOARD"), time)
        guard let reply = xcb_get_selection_owner_reply(connection, xcb_get_selection_owner(connection, atom("CLIPBOARD")), nil) else { return }
        defer { free(reply) }
        guard reply.pointee.owner == window else {
            logger.notice("could not take the clipboard to offer another workstation's copy")
            return
        }
        offered = Offered(id: id, targets: targets, fetch: fetch, time: time)
    }

    /// An app here asks for the clipboard we own: its targets at once, the data once
    /// fetched from the workstation it was copied on.
    func requested(_ e: xcb_selection_request_event_t) {
        // ICCCM: an old client names no property; the target's name is used then.
        let property = e.property == 0 ? e.target : e.property
        guard let offered, e.owner == window, e.selection == atom("CLIPBOARD") else { return answer(e, property: 0) }
        if e.target == atom("TARGETS") {
            let list = [atom("TARGETS"), atom("TIMESTAMP")] + offered.targets.keys.sorted()
            _ = list.withUnsafeBytes { xcb_change_property(connection, UInt8(XCB_PROP_MODE_REPLACE.rawValue), e.requestor, property, xcb_atom_t(XCB_ATOM_ATOM.rawValue), 32, UInt32(list.count), $0.baseAddress) }
            return answer(e, property: property)
        }
        if e.target == atom("TIMESTAMP") {
            var time = offered.time
            xcb_change_property(connection, UInt8(XCB_PROP_MODE_REPLACE.rawValue), e.requestor, property, xcb_atom_t(XCB_ATOM_INTEGER.rawValue), 32, 1, &time)
            return answer(e, property: property)
        }
        guard let mime = offered.targets[e.target] else { return answer(e, property: 0) }
        let (fetch, id) = (offered.fetch, offered.id)
        Task {
            do {
                let bytes = try await fetch(mime)
                self.perform { self.hand(bytes, to: e, property: property, copy: id) }
            } catch {
                self.logger.notice("a paste here could not get the other workstation's copy", metadata: ["type": "\(mime)", "error": "\(error)"])
                self.perform { self.answer(e, property: 0) }
            }
        }
    }

    func hand(_ fetched: [UInt8], to e: xcb_selection_request_event_t, property: xcb_atom_t, copy id: ClipboardID) {
        let (typeName, bytes) = ClipboardTargets.served(fetched, as: name(e.target))
        let type = atom(typeName)
        if bytes.count <= pieceBytes {
            _ = bytes.withUnsafeBytes { xcb_change_property(connection, UInt8(XCB_PROP_MODE_REPLACE.rawValue), e.requestor, property, type, 8, UInt32(bytes.count), $0.baseAddress) }
            return answer(e, property: property)
        }
        // INCR: the size first; a piece each time the requestor deletes the property. Its
        // window's property changes and its end are ours to hear until the transfer ends
        // (event masks are per client: the requestor's own are untouched).
        var mask = XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue | XCB_EVENT_MASK_STRUCTURE_NOTIFY.rawValue
        xcb_change_window_attributes(connection, e.requestor, XCB_CW_EVENT_MASK.rawValue, &mask)
        var size = UInt32(clamping: bytes.count)
        xcb_change_property(connection, UInt8(XCB_PROP_MODE_REPLACE.rawValue), e.requestor, property, atom("INCR"), 32, 1, &size)
        transfers[TransferKey(requestor: e.requestor, property: property)] = Transfer(type: type, bytes: bytes)
        answer(e, property: property)
    }

    /// A transfer ended: stop hearing of its requestor's window unless another is under way.
    func ended(_ key: TransferKey) {
        transfers[key] = nil
        guard !transfers.keys.contains(where: { $0.requestor == key.requestor }) else { return }
        var none: UInt32 = 0
        xcb_change_window_attributes(connection, key.requestor, XCB_CW_EVENT_MASK.rawValue, &none)
    }

    func sendNextPiece(_ key: TransferKey) {
        guard var t = transfers[key] else { return }
        let end = min(t.bytes.count, t.offset + pieceBytes)
        _ = t.bytes[t.offset..<end].withUnsafeBytes {
            xcb_change_property(connection, UInt8(XCB_PROP_MODE_REPLACE.rawValue), key.requestor, key.property, t.type, 8, UInt32(end - t.offset), $0.baseAddress)
        }
        if t.offset == end {
            ended(key)  // the zero-length piece: done
            return
        }
        t.offset = end
        t.touched = ContinuousClock.now
        transfers[key] = t
    }

    func answer(_ e: xcb_selection_request_event_t, property: xcb_atom_t) {
        var notify = xcb_selection_notify_event_t(response_type: UInt8(XCB_SELECTION_NOTIFY), pad0: 0, sequence: 0, time: e.time,
                                                  requestor: e.requestor, selection: e.selection, target: e.target, property: property)
        withUnsafeBytes(of: &notify) { raw in
            _ = xcb_send_event(connection, 0, e.requestor, XCB_EVENT_MASK_NO_EVENT.rawValue, raw.baseAddress!.assumingMemoryBound(to: CChar.self))
        }
    }
}
