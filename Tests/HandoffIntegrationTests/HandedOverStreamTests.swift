import Dispatch
import Foundation
import HandoffClient
import HandoffCore
import HandoffSystem
import NIOCore
import HandoffTestSupport
import Testing

/// Streams whose origin app handed its descriptors to handoffd (LocalAPI.md §15.8): through
/// the client library with a regular file and a socket, and handoffctl's fallback to
/// relaying for a handoffd without a descriptor socket.
extension WorkstationTests {
@Suite struct HandedOverStreamTests {
    let streams = ContinuationStreamTests()
    func withPair(_ body: (NetnsRun) async throws -> Void) async throws { try await streams.withPair([], body) }
    func waitForOffer(_ net: NetnsRun, _ type: String) async throws { try await streams.waitForOffer(net, type) }
    func sha256(_ net: NetnsRun, _ path: String) async throws -> String { try await streams.sha256(net, path) }

    /// The origin app is this test, through the client library: it hands over a regular
    /// file as the source and one end of a socket pair as the sink. b sends a request and
    /// gets the file; the request arrives on the app's end of the socket; the app's `end`
    /// is what lets the file's end reach b.
    @Test func anAppHandsOverAFileAndASocket() async throws {
        try await withPair { net in
            let source = net.directory + "/handed.bin"
            _ = try await net.exec("a", ["/bin/sh", "-c", "head -c 5242880 /dev/urandom > \(source)"])
            let a = HandoffClient(socketPath: net.socket("a"))
            let session = try await a.openSession()
            defer { session.close() }
            var draft = ActivityDraft(activityType: "org.example.handed")
            draft.supportsContinuationStreams = true
            _ = try await a.becomeCurrent(draft, session: session.token)
            try await waitForOffer(net, "org.example.handed")

            let request = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let origin = Task { () throws -> [UInt8] in
                for try await event in session.events {
                    guard case .streamRequested(_, let streamID, _) = event else { continue }
                    let file = open(source, O_RDONLY | O_CLOEXEC)
                    var pair: [CInt] = [0, 0]
                    guard file >= 0, socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else { throw TestFailure("open/socketpair") }
                    let appEnd = pair[0]
                    defer { close(appEnd) }
                    return try await a.acceptStream(streamID, handingOver: file, sink: pair[1], length: 5_242_880) { stream in
                        close(file)
                        close(pair[1])  // handoffd's copy is the only writer left: its close is the end
                        // A blocking read on a thread of its own, not the cooperative pool's.
                        let got = await withCheckedContinuation { (c: CheckedContinuation<[UInt8], Never>) in
                            DispatchQueue.global().async {
                                var got: [UInt8] = []
                                var chunk = [UInt8](repeating: 0, count: 65536)
                                while true {
                                    let n = chunk.withUnsafeMutableBytes { read(appEnd, $0.baseAddress, $0.count) }
                                    if n <= 0 { break }
                                    got += chunk[..<n]
                                }
                                c.resume(returning: got)
                            }
                        }
                        try await stream.writer.finish()
                        var written: Int64 = -1
                        while let delivery = try await stream.reader.next() {
                            if case .written(let n) = delivery { written = n }
                        }
                        #expect(written == Int64(request.count))
                        try await stream.reader.waitUntilClosed()
                        return got
                    }
                }
                throw TestFailure("the session ended without a stream request")
            }
            let b = HandoffClient(socketPath: net.socket("b"))
            let continued = try await b.continueActivity(type: "org.example.handed")
            let received = try await b.withStream(toActivity: continued.record.activity.id.rawValue) { stream in
                #expect(stream.info.length == 5_242_880)
                try await stream.writer.write(request)
                try await stream.writer.finish()
                var all: [UInt8] = []
                while let bytes = try await stream.reader.read() { all += bytes.readableBytesView }
                return all
            }
            #expect(try await origin.value == request, "the request went into the app's socket whole")
            let local = try Data(contentsOf: URL(fileURLWithPath: source))
            #expect(received.count == local.count && received == Array(local), "b got the file whole")
            let log = (try? String(contentsOfFile: net.logPath("a"), encoding: .utf8)) ?? ""
            #expect(log.contains("source=\"app's descriptors\""), "a's handoffd moved the bytes itself")
        }
    }

    /// An older handoffd has no descriptor socket: handoffctl relays the command's bytes
    /// itself, and the stream is the same.
    @Test func withoutADescriptorSocketTheAppRelays() async throws {
        try await withPair { net in
            let source = net.directory + "/app-data.bin"
            _ = try await net.exec("a", ["/bin/sh", "-c", "head -c 8388608 /dev/urandom > \(source)"])
            #expect(unlink(DescriptorPassing.socketPath(besideControlSocket: net.socket("a"))) == 0)
            let ownerLog = net.directory + "/owner.log"
            let owner = try await net.spawn("a", log: ownerLog, [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.bulk", "--attach",
                "--stream-exec", "cat \(source)",
            ])
            defer { net.stop(owner, SIGKILL) }
            try await waitForOffer(net, "org.example.bulk")
            let target = net.directory + "/received.bin"
            let r = try await net.ctl("b", "continue", "--stream-to", target)
            #expect(r.status == 0 && r.stdout.contains("8388608 bytes received"), "\(r)")
            #expect(try await sha256(net, target) == (try await sha256(net, source)))
            try await eventually(5, "the owner to report the relayed stream") {
                ((try? String(contentsOfFile: ownerLog, encoding: .utf8)) ?? "").contains("8388608 bytes sent")
            }
        }
    }
}
}

extension WorkstationTests.HandedOverStreamTests {
    /// The origin's command never reads its stdin, so handoffd's write into the handed-over
    /// sink waits. The command then fails (killed): the waiting write must not hold the
    /// stream. The continuing app hears the command's failure, and a's handoffd ends the
    /// stream. (Before, the relay waited on the sink for as long as the command lived.)
    @Test func aSinkNobodyReadsDoesNotHoldTheStream() async throws {
        try await withPair { net in
            let request = net.directory + "/request.bin"
            _ = try await net.exec("b", ["/bin/sh", "-c", "head -c 16777216 /dev/urandom > \(request)"])
            let owner = try await net.spawn("a", log: net.directory + "/owner.log", [
                try TestEnvironment.binary("handoffctl"), "become-current", "--type", "org.example.deaf", "--attach",
                "--stream-exec", "exec sleep 600",
            ])
            defer { net.stop(owner, SIGKILL) }
            try await waitForOffer(net, "org.example.deaf")
            let senderLog = net.directory + "/sender.log"
            let sender = try await net.spawn("b", log: senderLog, [
                try TestEnvironment.binary("handoffctl"), "continue", "--stream-from", request, "--stream-to", "/dev/null",
            ])
            defer { net.stop(sender, SIGKILL) }
            try await eventually(10, "the stream to open at the origin") {
                ((try? String(contentsOfFile: net.logPath("a"), encoding: .utf8)) ?? "").contains("source=\"app's descriptors\"")
            }
            try await Task.sleep(for: .seconds(1))  // the sink's pipe fills up, the write waits
            let killed = try await net.exec("a", ["pkill", "-f", "^sleep 600$"])
            #expect(killed.status == 0, "the command was there to kill: \(killed)")
            try await eventually(10, "a's handoffd to end the stream: \((try? String(contentsOfFile: net.directory + "/owner.log", encoding: .utf8)) ?? "")") {
                ((try? String(contentsOfFile: net.logPath("a"), encoding: .utf8)) ?? "").contains("continuation stream failed")
            }
            try await eventually(10, "the continuing app to hear why") {
                ((try? String(contentsOfFile: senderLog, encoding: .utf8)) ?? "").contains("exited with status")
            }
        }
    }
}
