import HandoffControlAPI
import HandoffCore
import HandoffPeerProtocol
import NIOConcurrencyHelpers
import NIOCore
@testable import HandoffDaemon

/// A link end that keeps what it was sent: a service's unit test reads what each peer
/// heard, with no socket.
final class RecordingLink: LinkEnd, @unchecked Sendable {
    let deviceID: DeviceID
    let deviceName: String
    let version: UInt16
    /// Where a stream would be dialled (nil: the peer did not say).
    var streamAddress: SocketAddress? { address.withLockedValue { $0 } }
    let address = NIOLockedValueBox<SocketAddress?>(nil)
    private let lock = NIOLock()
    private var messages: [PeerMessage] = []

    convenience init(_ byte: UInt8, name: String = "peer", version: UInt16 = PeerHello.currentVersion) {
        self.init(Array(repeating: byte, count: 32), name: name, version: version)
    }

    init(_ bytes: [UInt8], name: String, version: UInt16 = PeerHello.currentVersion) {
        deviceID = DeviceID(bytes: bytes)
        deviceName = name
        self.version = version
    }

    func send(_ message: PeerMessage) { lock.withLock { messages.append(message) } }

    /// What was sent since the last call.
    func take() -> [PeerMessage] { lock.withLock { defer { messages = [] }; return messages } }
}

/// Events a service yielded, in order. Yielding is synchronous, so what an awaited call
/// emitted is there when it returns; a marker ends each read, with no wait.
final class EventTap: @unchecked Sendable {
    let events = PeerEvents()
    private var iterator: AsyncStream<ControlEvent>.Iterator

    init() { iterator = events.stream.makeAsyncIterator() }

    var continuation: AsyncStream<ControlEvent>.Continuation { events.continuation }

    /// Everything yielded since the last call.
    func drain() async -> [ControlEvent] {
        events.continuation.yield(.session(token: "tap-mark"))
        var out: [ControlEvent] = []
        while let e = await iterator.next() {
            if case .session(let token) = e, token == "tap-mark" { break }
            out.append(e)
        }
        return out
    }
}
