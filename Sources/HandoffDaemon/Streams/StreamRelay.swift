import HandoffStreamFrames
import HandoffPeerProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Moves a stream's frames both ways between an app's end (control socket) and a peer's
/// end (TLS), until both directions have ended or one side failed. Backpressure is NIO's:
/// a write waits while the other side is not writable, and an unread inbound stream stops
/// reading from its socket, so a slow reader slows the writer at the far end.
///
/// Errors travel on: a peer that breaks off reaches the app as an error frame, an app that
/// closes without ending reaches the peer as one. Never a silent end.
enum StreamRelay {
    typealias PeerMessages = NIOAsyncChannelInboundStream<PeerMessage>.AsyncIterator

    struct Counts: Sendable {
        var toPeer: Int64 = 0
        var toApp: Int64 = 0
    }

    /// What the two directions share: who ended, the first failure, bytes moved.
    final class State: Sendable {
        private let box = NIOLockedValueBox((appEnded: false, peerEnded: false, failure: StreamFailure?.none, counts: Counts()))

        /// Records the first failure; false when one was recorded already.
        func fail(_ f: StreamFailure) -> Bool {
            box.withLockedValue { s in
                guard s.failure == nil else { return false }
                s.failure = f
                return true
            }
        }
        var failure: StreamFailure? { box.withLockedValue { $0.failure } }
        func appEnded() { box.withLockedValue { $0.appEnded = true } }
        var hasAppEnded: Bool { box.withLockedValue { $0.appEnded } }
        func peerEnded() { box.withLockedValue { $0.peerEnded = true } }
        var hasPeerEnded: Bool { box.withLockedValue { $0.peerEnded } }
        func add(toPeer: Int = 0, toApp: Int = 0) {
            box.withLockedValue { s in
                s.counts.toPeer += Int64(toPeer)
                s.counts.toApp += Int64(toApp)
            }
        }
        var counts: Counts { box.withLockedValue { $0.counts } }
    }

    /// Runs the relay; returns the failure, nil when both directions ended cleanly.
    static func run(app: AppStreamEnd, peerMessages: inout PeerMessages, peerOut: NIOAsyncChannelOutboundWriter<PeerMessage>,
                    peerChannel: Channel, peerName: String, state: State = State()) async -> StreamFailure? {
        // The app's connection closing before both ends is an abort, noticed even while a
        // write waits for a peer that stopped reading (nothing reads the app's side then).
        // A second later: what the app sent before closing (an error frame with its
        // reason) is read and passed on first whenever the relay can still read.
        app.channel.closeFuture.whenComplete { _ in
            peerChannel.eventLoop.scheduleTask(in: .seconds(1)) {
                guard !(state.hasAppEnded && state.hasPeerEnded) else { return }
                if state.fail(StreamFailure("app_closed", "the app at the other end closed the stream before it ended")) {
                    peerChannel.close(promise: nil)
                }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            // App to peer, in a child task (the app's stream can be iterated anywhere).
            group.addTask {
                await appToPeer(app, peerOut: peerOut, peerChannel: peerChannel, peerName: peerName, state: state)
            }
            if await peerToApp(&peerMessages, app: app, peerChannel: peerChannel, peerName: peerName, state: state) == .appGone {
                // The app's connection went while the peer's bytes were on their way to it.
                // Why it went is for the app's direction to say: an error frame it sent just
                // before closing (a command that failed, say) is still to be read there, and
                // it must reach the peer, not a guess of ours. Only an app that had ended
                // its own direction and then stopped reading leaves nothing to say: then we do.
                await group.waitForAll()
                if state.fail(StreamFailure("app_closed", "the app at the other end stopped reading before the stream ended")) {
                    await sendLast(state.failure!.peerFrame, on: peerChannel)
                }
            }
            if state.failure != nil {
                group.cancelAll()
                peerChannel.close(promise: nil)
                await closeAfterError(app.channel)
            }
            await group.waitForAll()
        }
        return state.failure
    }

    /// An error frame for an app whose stream never started, then the close, once the app
    /// has closed (or after 2 s). The frame may follow the 101 so closely that the app's
    /// HTTP client is still switching protocols when our close arrives, and NIO's client
    /// loses what it had buffered then: the app would see a bare close, not the reason.
    static func refuse(_ failure: StreamFailure, on channel: Channel) async {
        await closeOnceTheAppHas(channel) { try? await channel.writeAndFlush(failure.frame).get() }
    }

    /// Closes an app's connection after its error frame. An app still writing must get to
    /// read that frame, and closing at once would fail its next write first (its NIO, or
    /// any client, then closes and never reads what was waiting). So our output ends now,
    /// and the connection once the app has closed it (the client library does on an
    /// error frame), or after 2 s.
    static func closeAfterError(_ channel: Channel) async {
        await closeOnceTheAppHas(channel) { channel.close(mode: .output, promise: nil) }
    }

    /// Does `last`, then waits until the app has closed the connection, closing it after
    /// 2 s if the app has not.
    private static func closeOnceTheAppHas(_ channel: Channel, after last: () async -> Void) async {
        let limit = channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
        await last()
        try? await channel.closeFuture.get()
        limit.cancel()
    }

    private static func appToPeer(_ app: AppStreamEnd, peerOut: NIOAsyncChannelOutboundWriter<PeerMessage>, peerChannel: Channel,
                                  peerName: String, state: State) async {
        do {
            for try await frame in app.inbound {
                switch frame {
                case .data(let bytes):
                    // A write the peer's connection refuses ends this direction only: the
                    // peer's direction then reads why it went (an error frame it sent just
                    // before closing, or a bare close), so that reason is not lost in a race.
                    do { try await peerOut.write(.stream(.data(bytes))) } catch { return }
                    state.add(toPeer: bytes.readableBytes)
                case .end:
                    state.appEnded()  // before the write: the peer may close as soon as it has it
                    // Through the channel, to learn when it is on the wire: closing earlier
                    // would drop what is still queued.
                    do { try await peerChannel.writeAndFlush(PeerMessage.stream(.end)).get() } catch { return }
                    return
                case .error(let code, let message):
                    let f = StreamFailure(code, message)
                    if state.fail(f) { await sendLast(f.peerFrame, on: peerChannel) }
                    peerChannel.close(promise: nil)
                    return
                case .open, .written:
                    let f = StreamFailure("protocol", "an app sent an \(frame.typeCode == StreamFrame.openType ? "open" : "written") frame; only handoffd sends those")
                    if state.fail(f) {
                        await sendLast(f.frame, on: app.channel)
                        await sendLast(StreamFailure("app_closed", "the app at the other end broke the stream protocol").peerFrame, on: peerChannel)
                    }
                    peerChannel.close(promise: nil)
                    return
                }
            }
            // The app's connection ended without an end frame: an abort, not a finish.
            if state.fail(StreamFailure("app_closed", "the app at the other end closed the stream before ending it")) {
                await sendLast(state.failure!.peerFrame, on: peerChannel)
            }
            peerChannel.close(promise: nil)
        } catch is CancellationError {
        } catch let e as PeerProtocolError {
            // The app's bytes broke the frame rules (a frame over the cap, say): both sides hear it.
            if state.fail(StreamFailure("protocol", "the app's frames broke the stream's rules: \(e.message)")) {
                await sendLast(StreamFailure("protocol", "your frames broke the stream's rules: \(e.message)").frame, on: app.channel)
                await sendLast(StreamFailure("app_closed", "the app at the other end broke the stream protocol: \(e.message)").peerFrame, on: peerChannel)
            }
            peerChannel.close(promise: nil)
            app.channel.close(promise: nil)
        } catch {
            // Reading the app failed: its connection broke. The peer hears it, not a bare close.
            let f = StreamFailure("app_closed", "the app at the other end lost its connection to handoffd")
            if state.fail(f) { await sendLast(f.peerFrame, on: peerChannel) }
            peerChannel.close(promise: nil)
            app.channel.close(promise: nil)
        }
    }

    /// Writes a stream's last frame and waits until it is on the wire (at most 5 s, for a
    /// peer that stopped reading): closing right after a plain write could drop it, and the
    /// other side would see a bare close instead of the reason.
    /// The same for either end: a `PeerMessage` to the peer, a `StreamFrame` to the app.
    static func sendLast<Message: Sendable>(_ message: Message, on channel: Channel) async {
        let limit = channel.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
        try? await channel.writeAndFlush(message).get()
        limit.cancel()
    }

    enum PeerDirectionOutcome { case done, appGone }

    /// The peer's direction, to `app`; without an app (a stream file at the origin) what
    /// arrives is counted and dropped, with the same rules for its end and its failures.
    /// `.appGone`: a write to the app failed, and nothing was recorded (see `run`).
    @discardableResult
    static func peerToApp(_ messages: inout PeerMessages, app: AppStreamEnd?, peerChannel: Channel, peerName: String, state: State) async -> PeerDirectionOutcome {
        func fail(_ f: StreamFailure) async {
            // Flushed before the relay closes the app's connection, or the app would see
            // a bare close instead of the reason.
            if state.fail(f), let app { await sendLast(f.frame, on: app.channel) }
        }
        /// The file could not be written: both ends hear why (the origin without our path).
        func failWriting(_ f: StreamFailure, _ sink: StreamFileSink) async {
            guard state.fail(f) else { return }
            if let app { await sendLast(f.frame, on: app.channel) }
            let why = sink.failureReason ?? "its file could not be written"
            await sendLast(StreamFailure(f.code, "the continuing side could not write the stream into its file: \(why)").peerFrame, on: peerChannel)
        }
        // Progress for an app whose file handoffd writes: often enough for a progress bar,
        // rarely enough to cost nothing.
        var reported: Int64 = 0
        let reportEvery: Int64 = 4 << 20
        var ended = false
        do {
            while let message = try await messages.next() {
                switch message {
                case .stream(.data(let bytes)) where !ended:
                    if let limit = app?.limit, state.counts.toApp + Int64(bytes.readableBytes) > limit {
                        let f = StreamFailure("too_large", "more than \(limit) bytes came; the rest is refused")
                        if state.fail(f) {
                            if let app { await sendLast(f.frame, on: app.channel) }
                            await sendLast(f.peerFrame, on: peerChannel)
                        }
                        return .done
                    }
                    if let app, let sink = app.sink {
                        do { try await sink.write(bytes) } catch {
                            await failWriting(error, sink)
                            return .done
                        }
                        let written = sink.written
                        if written - reported >= reportEvery {
                            reported = written
                            do { try await app.outbound.write(.written(written)) } catch { return state.failure == nil ? .appGone : .done }
                        }
                    } else {
                        do { try await app?.outbound.write(.data(bytes)) } catch { return state.failure == nil ? .appGone : .done }
                    }
                    state.add(toApp: bytes.readableBytes)
                case .stream(.end) where !ended:
                    ended = true
                    state.peerEnded()
                    if let app, let sink = app.sink {
                        // The end reaches the app only once every byte is in its file.
                        do {
                            let total = try await sink.finish()
                            try? await app.outbound.write(.written(total))
                        } catch {
                            await failWriting(error, sink)
                            return .done
                        }
                    }
                    do { try await app?.channel.writeAndFlush(StreamFrame.end).get() } catch { return state.failure == nil ? .appGone : .done }
                    if state.hasAppEnded { return .done }
                    // Keep reading: the peer's close (or an error) after this still counts
                    // while our app's direction is open.
                case .stream(.error(let code, let message)), .error(let code, let message):
                    await fail(StreamFailure(wire: code, message))
                    return .done
                default:
                    await fail(StreamFailure("protocol", "\(peerName) sent something that is not a stream frame"))
                    return .done
                }
            }
        } catch {
            if state.failure != nil { return .done }  // we closed it because of a failure already
            await fail(StreamFailure("peer_gone", "the connection to \(peerName) broke during the stream: \(error)"))
            return .done
        }
        // The peer closed. Fine once both directions are done; otherwise the stream broke.
        if state.failure != nil || (ended && state.hasAppEnded) { return .done }
        await fail(StreamFailure("peer_gone", "\(peerName) closed the stream before it was finished"))
        return .done
    }
}
