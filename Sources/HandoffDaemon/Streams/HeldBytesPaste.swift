import HandoffCore
import HandoffStreamFrames
import NIOCore

/// A paste on the workstation whose copy handoffd holds itself (`handoffctl copy`, then
/// `handoffctl paste` here): no peer, so the bytes go straight to the app, or into its
/// file (`into`), then `end`. The app's own direction is read until its `end` and dropped.
enum HeldBytesPaste {
    /// How long the app has to send its `end` once it has every byte.
    static let endWait: Int64 = 10

    static func run(_ bytes: [UInt8], open: JSONObject, app: AppStreamEnd) async {
        do {
            try await app.outbound.write(.open(open))
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + StreamFileServer.chunkBytes)
                let chunk = app.channel.allocator.buffer(bytes: bytes[offset..<end])
                offset = end
                if let sink = app.sink { try await sink.write(chunk) } else { try await app.outbound.write(contentsOf: StreamFrame.dataFrames(of: chunk)) }
            }
            if let sink = app.sink { try await app.outbound.write(.written(try await sink.finish())) }
            try await app.channel.writeAndFlush(StreamFrame.end).get()
            // The app's own end is all that is left to hear; one that never sends it does
            // not hold its connection longer than this.
            let limit = app.channel.eventLoop.scheduleTask(in: .seconds(Self.endWait)) { app.channel.close(promise: nil) }
            defer { limit.cancel() }
            for try await frame in app.inbound {
                switch frame {
                case .end, .error: return
                default: continue
                }
            }
        } catch let f as StreamFailure {
            await StreamRelay.refuse(f, on: app.channel)
        } catch {
            app.channel.close(promise: nil)
        }
    }
}
