import HandoffCore
import HandoffStreamFrames
import NIOCore

/// A paste on the workstation whose copy handoffd holds itself (`handoffctl copy`, then
/// `handoffctl paste` here): no peer, so the bytes go straight to the app, or into its
/// file (`into`), then `end`. The app's own direction is read until its `end` and dropped.
enum HeldBytesPaste {
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
