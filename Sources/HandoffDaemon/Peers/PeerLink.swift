import HandoffCore
import HandoffWire
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
    let channel: Channel
    private let outbound: AsyncStream<PeerMessage>.Continuation
    private let state = NIOLockedValueBox(State())

    private struct State {
        var nextRequest: UInt64 = 1
        var pending: [UInt64: CheckedContinuation<PeerMessage.FetchResult, Never>] = [:]
        var closed = false
    }

    init(deviceID: DeviceID, deviceName: String, dialledBy: DeviceID, remoteAddress: String, channel: Channel,
         outbound: AsyncStream<PeerMessage>.Continuation) {
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.dialledBy = dialledBy
        self.remoteAddress = remoteAddress
        self.channel = channel
        self.outbound = outbound
    }

    var device: PeerDevice { PeerDevice(id: deviceID.description, name: deviceName) }

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
                s.pending[r] = c
                return r
            }
            guard let request else {
                c.resume(returning: .failure(code: "peer-gone", message: "the connection to \(deviceName) is closed"))
                return
            }
            send(.fetch(requestID: request, activityID: id))
            channel.eventLoop.scheduleTask(in: timeout) { [self] in
                resolve(request, .failure(code: "timeout", message: "\(deviceName) did not answer within \(timeout.nanoseconds / 1_000_000) ms"))
            }
        }
    }

    func resolve(_ request: UInt64, _ result: PeerMessage.FetchResult) {
        let c = state.withLockedValue { $0.pending.removeValue(forKey: request) }
        c?.resume(returning: result)
    }

    /// Ends the connection; pending fetches fail with `peer-gone`.
    func close() {
        let pending = state.withLockedValue { s -> [CheckedContinuation<PeerMessage.FetchResult, Never>] in
            s.closed = true
            defer { s.pending.removeAll() }
            return Array(s.pending.values)
        }
        for c in pending { c.resume(returning: .failure(code: "peer-gone", message: "the connection to \(deviceName) closed")) }
        outbound.finish()
        channel.close(promise: nil)
    }
}
