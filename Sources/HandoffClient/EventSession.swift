import HandoffCore
import HandoffControlAPI
import NIOCore
import NIOHTTP1

/// An open event stream: the app's session with handoffd. Activities made with its
/// `token` belong to it and are invalidated when it closes (or the app dies).
public final class EventSession: Sendable {
    public let token: String
    /// Events after the initial `session` one, in order. Ends when the session closes.
    public let events: AsyncThrowingStream<ControlEvent, Error>
    private let task: Task<Void, Never>
    private let connection: Channel

    init(token: String, events: AsyncThrowingStream<ControlEvent, Error>, task: Task<Void, Never>, connection: Channel) {
        self.token = token
        self.events = events
        self.task = task
        self.connection = connection
    }

    /// Ends the session; its activities are invalidated. The connection is closed on its
    /// event loop at once, not when the reading task next runs: in a process whose
    /// cooperative threads are busy that took seconds, and the session lived on meanwhile.
    public func close() {
        task.cancel()
        connection.close(promise: nil)
    }

    /// Ends the session and returns once its connection is closed: for a process about
    /// to exit, whose open connection would otherwise end with it, unclosed.
    public func closeAndWait() async {
        close()
        try? await connection.closeFuture.get()
        await task.value
    }

    deinit {
        task.cancel()
        connection.close(promise: nil)
    }

    static func open(socketPath: String) async throws -> EventSession {
        let channel = try await ControlConnection.connect(socketPath)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ControlEvent.self)
        let (first, firstContinuation) = AsyncThrowingStream.makeStream(of: String.self)
        let task = Task {
            do {
                try await channel.executeThenClose { inbound, outbound in
                    try await outbound.write(contentsOf: [
                        .head(ControlConnection.requestHead(.GET, ControlEndpoint.events.path(), bodyLength: nil, headers: [])), .end(nil),
                    ])
                    var line: [UInt8] = []
                    var gotToken = false
                    for try await part in inbound {
                        switch part {
                        case .head(let h):
                            guard h.status == .ok else { throw HandoffClientError.badResponse("GET /v1/events answered \(h.status.code)") }
                        case .body(let buffer):
                            for byte in buffer.readableBytesView {
                                guard byte == 0x0A else {
                                    line.append(byte)
                                    guard line.count <= 16 << 20 else { throw HandoffClientError.badResponse("an event line over 16 MiB") }
                                    continue
                                }
                                let event = try ControlEvent(json: try JSONValue(parsing: line))
                                line.removeAll(keepingCapacity: true)
                                if !gotToken, case .session(let token) = event {
                                    gotToken = true
                                    firstContinuation.yield(token)
                                    firstContinuation.finish()
                                } else {
                                    continuation.yield(event)
                                }
                            }
                        case .end:
                            break
                        }
                    }
                }
                firstContinuation.finish(throwing: HandoffClientError.connectionLost("handoffd ended the event stream"))
                continuation.finish()
            } catch {
                let e = error is CancellationError ? error : (error as? HandoffClientError) ?? HandoffClientError.connectionLost("\(error)")
                firstContinuation.finish(throwing: e)
                continuation.finish(throwing: e)
            }
        }
        var it = first.makeAsyncIterator()
        guard let token = try await it.next() else {
            task.cancel()
            throw HandoffClientError.connectionLost("handoffd ended the event stream before sending a session token")
        }
        return EventSession(token: token, events: stream, task: task, connection: channel.channel)
    }
}
