import HandoffCore
import HandoffControlAPI

/// What other workstations ask of the registry: the offered activity's fresh payload,
/// telling the owner its activity was continued, and who serves its streams. What is
/// offered is the registry's `watchOffer`.
extension ActivityRegistry {
    /// A peer's fetch (`peer`; nil: this device's own, to hand on before sleep): the
    /// offered activity only, as fresh as its owner can make it. Offered to others only
    /// (`--to`): to `peer` it is as if nothing were offered.
    public func snapshotForPeer(_ id: ActivityID, for peer: DeviceID? = nil) async throws(HandoffError) -> ActivityRecord {
        guard let offered = lastOffer, offered.id == id, peer.map(offered.isFor) ?? true else {
            if let e = table.entries[id], e.state == .expired || e.activity.isExpired(at: clock.now()) {
                throw HandoffError(.gone, code: "expired", message: "the activity has expired")
            }
            throw HandoffError(.notFound, code: "not_offered", message: "that activity is not offered any more")
        }
        // Offered ahead of its save: served as the change will make it (daemon-owned, so
        // there is no owner to ask for a fresher payload).
        if let ahead = offeredAhead[id] {
            var record = ActivityTable.record(ahead.entry)
            record.stale = ahead.entry.activity.needsSave  // as `snapshot` says of one nobody can refresh
            return record
        }
        let record = try await snapshot(id.rawValue)
        // The wait for will-save may have changed what is offered: check again.
        guard let still = lastOffer, still.id == id, peer.map(still.isFor) ?? true, record.activity.eligibleForHandoff else {
            throw HandoffError(.notFound, code: "not_offered", message: "that activity stopped being offered while it was saved")
        }
        return record
    }

    /// Another workstation continued our activity: tell the sessions (the owner above all).
    public func noteContinued(_ id: ActivityID, by device: PeerDevice) {
        guard table.entries[id] != nil else { return }
        events.broadcast(.wasContinued(activityID: id, device: device))
    }

    /// Who serves an activity's continuation streams, for a peer's stream request.
    public func streamSource(for id: ActivityID, document: Bool = false, peer: DeviceID? = nil) throws(HandoffError) -> StreamSource {
        guard let e = offeredAhead[id]?.entry ?? table.entries[id], !ActivityTable.isFinal(e.state), e.targets.isEmpty || peer.map(e.targets.contains) ?? true else {
            throw HandoffError(.notFound, code: "not_offered", message: "that activity is not available on this device any more")
        }
        if document {
            guard let file = e.documentFile else {
                throw HandoffError(.conflict, code: "no_document", message: "the activity has no document to send")
            }
            return .document(file)
        }
        guard e.activity.supportsContinuationStreams else {
            throw HandoffError(.conflict, code: "streams_unsupported", message: "the activity \"\(e.activity.title.isEmpty ? e.activity.activityType : e.activity.title)\" does not support continuation streams")
        }
        switch e.owner {
        case .session(let token):
            guard events.isOpen(token) else { throw HandoffError(.gone, code: "owner_gone", message: "the app that owns the activity is gone") }
            return .session(token)
        case .daemon:
            guard let file = e.streamFile else {
                throw HandoffError(.conflict, code: "streams_unsupported", message: "the activity has no app or file to serve streams")
            }
            return .file(file)
        }
    }
}
