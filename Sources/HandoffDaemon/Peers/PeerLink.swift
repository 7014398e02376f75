import HandoffAvahi
import HandoffCore
import HandoffPeerProtocol
import NIOConcurrencyHelpers
import NIOCore

/// One authenticated connection to a trusted peer, after the hello. Writes go through a
/// bounded queue drained by the connection's writer task; fetches wait for their answer
/// by request id.
final class PeerLink: Sendable {
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
    private let outbound: AsyncStream<PeerMessage>.Continuation
    private let state = NIOLockedValueBox(State())

    private struct State {
        var nextRequest: UInt64 = 1
        var pending: [UInt64: (CheckedContinuation<PeerMessage.FetchResult, Never>, Scheduled<Void>?)] = [:]
        var closed = false
        var fetchesInFlight = 0
    }

    /// Fetches of this peer's that we are answering (PeerSession caps them).
    var fetchesInFlight: Int { state.withLockedValue { $0.fetchesInFlight } }

    func beginFetch() { state.withLockedValue { $0.fetchesInFlight += 1 } }

    func endFetch() { state.withLockedValue { $0.fetchesInFlight -= 1 } }

    init(deviceID: DeviceID, deviceName: String, dialledBy: DeviceID, remoteAddress: String, peerListenPort: UInt16?, channel: Channel,
         outbound: AsyncStream<PeerMessage>.Continuation, clockSkewSeconds: Double? = nil, instance: String? = nil) {
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

    var device: PeerDevice { PeerDevice(id: deviceID.description, name: deviceName) }

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
            let request: UInt64? = state.withLockedValue { s in
                guard !s.closed else { return nil }
                let r = s.nextRequest
                s.nextRequest += 1
                s.pending[r] = (c, nil)
                return r
            }
            guard let request else {
                c.resume(returning: .failure(code: "peer-gone", message: "the connection to \(deviceName) is closed"))
                return
            }
            let timer = channel.eventLoop.scheduleTask(in: timeout) { [self] in
                resolve(request, .failure(code: "timeout", message: "\(deviceName) did not answer within \(timeout.nanoseconds / 1_000_000) ms"))
            }
            state.withLockedValue { s in
                if s.pending[request] != nil { s.pending[request]!.1 = timer } else { timer.cancel() }
            }
            send(.fetch(requestID: request, activityID: id))
        }
    }

    func resolve(_ request: UInt64, _ result: PeerMessage.FetchResult) {
        guard let (c, timer) = state.withLockedValue({ $0.pending.removeValue(forKey: request) }) else { return }
        timer?.cancel()
        c.resume(returning: result)
    }

    /// Ends the connection; pending fetches fail with `peer-gone`.
    func close() {
        let pending = state.withLockedValue { s -> [(CheckedContinuation<PeerMessage.FetchResult, Never>, Scheduled<Void>?)] in
            s.closed = true
            defer { s.pending.removeAll() }
            return Array(s.pending.values)
        }
        for (c, timer) in pending {
            timer?.cancel()
            c.resume(returning: .failure(code: "peer-gone", message: "the connection to \(deviceName) closed"))
        }
        outbound.finish()
        channel.close(promise: nil)
    }
}
