import HandoffAvahi
import HandoffCore
import HandoffPeerProtocol
import NIOConcurrencyHelpers
import NIOCore

/// One authenticated connection to a trusted peer, after the hello. Writes go through a
/// bounded queue drained by the connection's writer task; fetches wait for their answer
/// by request id.
final class PeerLink: BookedLink {
    let deviceID: DeviceID
    let deviceName: String
    /// Whether we dialled: with two connections to one peer, both sides keep the one
    /// dialled by the smaller device ID.
    let dialledBy: DeviceID
    let remoteAddress: String
    /// Where the peer accepts connections (its address on this link, with the port from
    /// its hello): stream connections go there. A link-local address keeps its zone.
    let streamAddress: SocketAddress?
    let channel: Channel
    /// How far the peer's clock is ahead of ours (seconds), from its hello; nil if it
    /// did not say.
    let clockSkewSeconds: Double?
    /// The mDNS instance name the peer said it advertises (its hello), if it did.
    let instance: String?
    /// The protocol version the link speaks: the lower of the two hellos'.
    let version: UInt16
    private let outbound: AsyncStream<PeerMessage>.Continuation
    /// Where fetch timeouts are scheduled.
    private let timers: any Timers
    private let fetches = NIOLockedValueBox(FetchRequests<Waiter>())
    private let finishing = NIOLockedValueBox(false)

    /// A fetch we sent: the task waiting for its answer, and its timeout.
    private struct Waiter {
        let answer: CheckedContinuation<PeerMessage.FetchResult, Never>
        var timeout: ScheduledTimer?
    }

    /// Fetches of this peer's that we are answering (PeerSession caps them).
    var fetchesInFlight: Int { fetches.withLockedValue { $0.answering } }

    func beginFetch() { fetches.withLockedValue { $0.beginAnswering() } }

    func endFetch() { fetches.withLockedValue { $0.endAnswering() } }

    init(deviceID: DeviceID, deviceName: String, dialledBy: DeviceID, remoteAddress: String, peerListenPort: UInt16?, channel: Channel,
         outbound: AsyncStream<PeerMessage>.Continuation, timers: any Timers, clockSkewSeconds: Double? = nil, instance: String? = nil,
         version: UInt16 = PeerHello.currentVersion) {
        self.version = min(version, PeerHello.currentVersion)
        self.timers = timers
        self.clockSkewSeconds = clockSkewSeconds
        self.instance = instance
        var address = channel.remoteAddress
        if let port = peerListenPort { address?.port = Int(port) } else { address = nil }
        self.streamAddress = address
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.dialledBy = dialledBy
        self.remoteAddress = remoteAddress
        self.channel = channel
        self.outbound = outbound
    }

    /// Whether this mDNS result is the instance the peer said it advertises.
    func advertises(_ key: ServiceKey) -> Bool { key.domain == "local" && instance == key.name }

    func send(_ message: PeerMessage) {
        if case .dropped = outbound.yield(message) {
            // The peer stopped reading: more queued messages would only grow memory.
            close()
        }
    }

    /// Asks the peer for an activity's full payload; a failure result on timeout or loss.
    func fetch(_ id: ActivityID, timeout: TimeAmount) async -> PeerMessage.FetchResult {
        await withCheckedContinuation { (c: CheckedContinuation<PeerMessage.FetchResult, Never>) in
            guard let request = fetches.withLockedValue({ $0.open(Waiter(answer: c)) }) else {
                c.resume(returning: .failure(code: "peer-gone", message: "the connection to \(deviceName) is closed"))
                return
            }
            let timer = timers.schedule(in: .nanoseconds(timeout.nanoseconds)) { [self] in
                resolve(request, .failure(code: "timeout", message: "\(deviceName) did not answer within \(timeout.nanoseconds / 1_000_000) ms"))
            }
            if !fetches.withLockedValue({ $0.update(request, Waiter(answer: c, timeout: timer)) }) { timer.cancel() }
            send(.fetch(requestID: request, activityID: id))
        }
    }

    func resolve(_ request: UInt64, _ result: PeerMessage.FetchResult) {
        guard let waiter = fetches.withLockedValue({ $0.resolve(request) }) else { return }
        waiter.timeout?.cancel()
        waiter.answer.resume(returning: result)
    }

    /// Closes once what is queued has been written: the writer ends after the last
    /// message and then closes the link (before sleep, the kept offer must leave first).
    func closeWhenSent() {
        finishing.withLockedValue { $0 = true }
        outbound.finish()
    }

    /// The writer wrote everything queued: close if that was asked for.
    func sent() {
        if finishing.withLockedValue({ $0 }) { close() }
    }

    /// Ends the connection; pending fetches fail with `peer-gone`.
    func close() {
        for waiter in fetches.withLockedValue({ $0.close() }) {
            waiter.timeout?.cancel()
            waiter.answer.resume(returning: .failure(code: "peer-gone", message: "the connection to \(deviceName) closed"))
        }
        outbound.finish()
        channel.close(promise: nil)
    }
}
