import HandoffCore
import HandoffControlAPI
import NIOCore
import NIOPosix

/// Brings a peer's stream request and the owning app together at the origin. The owner
/// hears `stream-requested` with a fresh stream id on its session and answers by taking
/// the stream (an upgraded control connection) or refusing it; no answer in time, or the
/// session ending, fails the request. The id is unguessable and known only to the owner.
public actor StreamBroker {
    private struct Waiting {
        let token: String
        let continuation: CheckedContinuation<Result<AppStreamEnd, StreamFailure>, Never>
        let timer: ScheduledTimer
        /// Open files the owner handed over for this stream (§15.8), until it accepts.
        var handedOver: HandedOverDescriptors?
    }

    private let registry: ActivityRegistry
    let acceptTimeout: TimeAmount
    private let timers: any Timers
    private var waiting: [String: Waiting] = [:]

    init(registry: ActivityRegistry, acceptTimeout: TimeAmount, timers: any Timers) {
        self.registry = registry
        self.acceptTimeout = acceptTimeout
        self.timers = timers
    }

    /// Asks the owner session for a stream and waits for its answer.
    func askOwner(activityID: ActivityID, session token: String, device: PeerDevice) async -> Result<AppStreamEnd, StreamFailure> {
        await askOwner(session: token) { .streamRequested(activityID: activityID, streamID: $0, device: device) }
    }

    /// The same with the event that asks (`clipboard-requested` for a copy's bytes), made
    /// with the new stream's id.
    func askOwner(session token: String, event: @Sendable (String) -> ControlEvent) async -> Result<AppStreamEnd, StreamFailure> {
        let streamID = ActivityID.random().rawValue
        let asking = event(streamID)
        let registry = self.registry
        return await withCheckedContinuation { c in
            let timer = timers.schedule(in: .nanoseconds(acceptTimeout.nanoseconds)) {
                _ = Task { await self.timedOut(streamID) }
            }
            waiting[streamID] = Waiting(token: token, continuation: c, timer: timer)
            Task {
                let asked = await registry.askForStream(asking, owner: token)
                if !asked { self.resolve(streamID, .failure(StreamFailure("owner_gone", "the app that owns the activity is gone"))) }
            }
        }
    }

    /// The owner took the stream; nil when done, else why not. Descriptors it handed over
    /// for it go with it.
    func accept(_ streamID: String, _ end: AppStreamEnd) -> StreamFailure? {
        guard let w = waiting[streamID] else { return unknown(streamID) }
        var end = end
        end.handedOver = w.handedOver
        waiting[streamID]?.handedOver = nil
        resolve(streamID, .success(end))
        return nil
    }

    /// The owner hands over the stream's source and sink before accepting it (§15.8). Only
    /// for a stream waiting for its answer, once; the descriptors are closed if it never
    /// accepts. Nil when kept, else why not (and then they are closed).
    func handOver(_ streamID: String, _ descriptors: HandedOverDescriptors) -> StreamFailure? {
        guard let w = waiting[streamID] else {
            descriptors.close()
            return unknown(streamID)
        }
        guard w.handedOver == nil else {
            descriptors.close()
            return StreamFailure("bad_request", "descriptors for stream \(streamID) were handed over already")
        }
        waiting[streamID]?.handedOver = descriptors
        return nil
    }

    func refuse(_ streamID: String, reason: String?) -> StreamFailure? {
        guard waiting[streamID] != nil else { return unknown(streamID) }
        let why = reason.map { ": \($0)" } ?? ""
        resolve(streamID, .failure(StreamFailure("stream_refused", "the app that owns the activity refused the stream\(why)")))
        return nil
    }

    /// The owner's session ended: what waited for it fails now rather than at the timeout.
    func sessionClosed(_ token: String) {
        for (id, w) in waiting where w.token == token {
            resolve(id, .failure(StreamFailure("owner_gone", "the app that owns the activity went away")))
        }
    }

    func shutdown() {
        for id in Array(waiting.keys) { resolve(id, .failure(StreamFailure("shutting_down", "handoffd on the origin is shutting down"))) }
    }

    private func timedOut(_ streamID: String) {
        let seconds = Double(acceptTimeout.nanoseconds) / 1e9
        resolve(streamID, .failure(StreamFailure("stream_timeout", "the app that owns the activity did not take the stream within \(seconds.formatted1) s")))
    }

    private func resolve(_ streamID: String, _ result: Result<AppStreamEnd, StreamFailure>) {
        guard let w = waiting.removeValue(forKey: streamID) else { return }
        w.timer.cancel()
        w.handedOver?.close()  // still here only when the stream was not taken
        w.continuation.resume(returning: result)
    }

    private func unknown(_ id: String) -> StreamFailure {
        StreamFailure("unknown_stream", "no stream \(id) is waiting to be taken (it may have timed out, or was taken already)")
    }
}

extension Double {
    /// "10" or "2.5": seconds as people write them.
    var formatted1: String {
        self == rounded() ? String(Int(self)) : String((self * 10).rounded() / 10)
    }
}
