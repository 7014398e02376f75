import Foundation
import HandoffClient
import HandoffControlAPI
import HandoffCore
import NIOCore
import HandoffTestSupport
import Testing

/// The clipboard across two workstations in network namespaces (LocalAPI.md §23,
/// PeerProtocol.md §19): a copy is announced as formats only, its bytes leave the origin
/// only when a paste asks, a newer copy wins, and bad requests change nothing.
extension WorkstationTests {
@Suite struct ClipboardTests {
    let streams = ContinuationStreamTests()

    func withPair(_ extraB: [String] = [], _ body: (NetnsRun) async throws -> Void) async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b", extraB)
            try await net.pair("a", "b")
            try await body(net)
        }
    }

    func newest(_ net: NetnsRun, _ host: String) async throws -> ClipboardRecord? {
        try await HandoffClient(socketPath: net.socket(host)).clipboard()
    }

    func waitForCopy(_ net: NetnsRun, on host: String, _ id: ClipboardID) async throws {
        try await eventually(10, "copy \(id) to reach \(host)") { try await newest(net, host)?.id == id }
    }

    /// Streams the log says the daemon served for the clipboard, at the origin.
    func clipboardStreams(_ net: NetnsRun, _ host: String) throws -> Int {
        let log = (try? String(contentsOfFile: net.logPath(host), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains("continuation stream opened") && $0.contains("side=origin") && $0.contains("clipboard=") }.count
    }

    @Test func aCopyMovesOnlyWhenPastedAndACopyAgainWins() async throws {
        try await withPair { net in
            let copied = try await net.ctl("a", "--json", "copy", stdin: "hello from a\n")
            #expect(copied.status == 0, "\(copied)")
            let first = try ClipboardRecord.newest(json: try JSONValue(parsing: copied.stdout))!
            #expect(first.local && first.formats == [ClipboardFormat(type: "text/plain;charset=utf-8", size: 13)])
            try await waitForCopy(net, on: "b", first.id)
            let onB = try await newest(net, "b")!
            let idA = try await net.deviceID("a")
            #expect(!onB.local && onB.device.id == idA && onB.formats == first.formats)
            // Announced, and not one byte asked for yet.
            try await never(within: 0.3, because: "a's copy was asked for before any paste") { try clipboardStreams(net, "a") != 0 }
            let shown = try await net.ctl("b", "clipboard")
            #expect(shown.status == 0 && shown.stdout.contains("text/plain;charset=utf-8") && shown.stdout.contains("13 B"), "\(shown)")

            let pasted = try await net.ctl("b", "paste")
            #expect(pasted.status == 0 && pasted.stdout == "hello from a\n", "\(pasted)")
            #expect(try clipboardStreams(net, "a") == 1)

            // Copied again on a: a paste of the old copy is refused, never given the new bytes.
            #expect(try await net.ctl("a", "copy", stdin: "second").status == 0)
            let second = try await newest(net, "a")!
            try await waitForCopy(net, on: "b", second.id)
            let stale = try await net.ctl("b", "paste", "--id", first.id.rawValue)
            #expect(stale.status == 1 && stale.stdout.isEmpty && stale.stderr.contains("copied again"), "\(stale)")
            #expect(try await net.ctl("b", "paste").stdout == "second")

            // A copy on b is newer: both now show b's, a's is withdrawn, and nothing echoes back.
            #expect(try await net.ctl("b", "copy", "--type", "text/uri-list", stdin: "file:///srv/x\n").status == 0)
            let third = try await newest(net, "b")!
            #expect(third.local && third.formats[0].type == "text/uri-list")
            try await waitForCopy(net, on: "a", third.id)
            #expect(try await newest(net, "a")?.local == false)
            try await never(within: 0.3, because: "an echo from a replaced b's own copy as the newest on b") { try await newest(net, "b")?.id != third.id }
            #expect(try await net.ctl("a", "paste").stdout == "file:///srv/x\n")
            // A type the copy does not offer is refused with what it does offer.
            let wrong = try await net.ctl("a", "paste", "--type", "image/png")
            #expect(wrong.status == 1 && wrong.stderr.contains("text/uri-list"), "\(wrong)")

            // Cleared on b: a has nothing to paste.
            #expect(try await net.ctl("b", "clipboard", "--clear").status == 0)
            try await eventually(10, "the clear to reach a") { try await newest(net, "a") == nil }
            let empty = try await net.ctl("a", "paste")
            #expect(empty.status == 1 && empty.stderr.contains("nothing copied"), "\(empty)")
        }
    }

    /// The origin app (this test, through the client library) announces formats and
    /// serves each only when b pastes it: 50 MiB of text into a file, and an image.
    @Test func anAppServesItsCopyOnlyWhenPasted() async throws {
        try await withPair { net in
            let big = net.directory + "/big.txt"
            _ = try await net.exec("a", ["/bin/sh", "-c", "head -c 39321600 /dev/urandom | base64 -w 76 > \(big)"])
            let size = Int64(try FileManager.default.attributesOfItem(atPath: big)[.size] as! Int)
            #expect(size > 50_000_000)
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47] + (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let a = HandoffClient(socketPath: net.socket("a"))
            let session = try await a.openSession()
            defer { session.close() }
            let record = try await a.announceClipboard([ClipboardFormat(type: "text/plain;charset=utf-8", size: size),
                                                        ClipboardFormat(type: "image/png", size: Int64(png.count))], session: session.token)
            try await waitForCopy(net, on: "b", record.id)

            let asked = AskedTypes()
            let idB = try await net.deviceID("b")
            let origin = Task {
                for try await event in session.events {
                    guard case .clipboardRequested(let id, let type, let streamID, let device) = event else { continue }
                    asked.add(type)
                    #expect(id == record.id && device.id == idB)
                    if type == "image/png" {
                        try await a.acceptStream(streamID, length: Int64(png.count)) { stream in
                            try await stream.writer.write(png)
                            try await stream.writer.finish()
                            while try await stream.reader.read() != nil {}
                        }
                    } else if type == "text/plain;charset=utf-8" {
                        let fd = open(big, O_RDONLY)
                        defer { close(fd) }
                        try await a.acceptStream(streamID, handingOver: fd, length: size) { stream in
                            try await stream.writer.finish()
                            while try await stream.reader.read() != nil {}
                            try await stream.reader.waitUntilClosed()
                        }
                    } else {
                        try await a.refuseStream(streamID, reason: "not that one")
                    }
                }
            }
            defer { origin.cancel() }
            try await never(within: 0.3, because: "a type was asked for before any paste") { !asked.types.isEmpty }

            let target = net.directory + "/pasted.txt"
            let r = try await net.ctl("b", "paste", "--output", target)
            #expect(r.status == 0, "\(r)")
            #expect(try await streams.sha256(net, target) == (try await streams.sha256(net, big)))
            let b = HandoffClient(socketPath: net.socket("b"))
            let image = try await b.paste(type: "image/png") { stream in
                #expect(stream.info.fields["type"]?.stringValue == "image/png" && stream.info.length == Int64(png.count))
                var all: [UInt8] = []
                while let bytes = try await stream.reader.read() { all += bytes.readableBytesView }
                return all
            }
            #expect(image == png)
            #expect(asked.types == ["text/plain;charset=utf-8", "image/png"])

            // The app's session ends: its copy cannot be pasted any more, and b hears so.
            session.close()
            try await eventually(10, "b to hear the copy is gone") { try await newest(net, "b") == nil }
        }
    }

    /// A paste whose app never reads holds its own stream only: another paste of the same
    /// copy arrives whole meanwhile, and both daemons answer.
    @Test func aPasteThatNeverReadsHoldsNothingElse() async throws {
        try await withPair { net in
            let ctl = try TestEnvironment.binary("handoffctl")
            let made = try await net.exec("a", ["/bin/sh", "-c", "head -c 8388608 /dev/urandom | HANDOFF_SOCKET=\(net.socket("a")) \(ctl) copy --type application/octet-stream"])
            #expect(made.status == 0, "\(made)")
            let copy = try await newest(net, "a")!
            try await waitForCopy(net, on: "b", copy.id)
            let b = HandoffClient(socketPath: net.socket("b"))
            let stalled = Task {
                try await b.paste { stream in
                    #expect(stream.info.length == 8_388_608)
                    try await Task.sleep(for: .seconds(60))
                }
            }
            // 1 s for the stalled paste to be under way (its stream open, its reader
            // asleep); were it not yet, the paste below would prove less, never fail.
            try await Task.sleep(for: .seconds(1))
            let target = net.directory + "/whole.bin"
            let r = try await net.ctl("b", "paste", "--output", target)
            #expect(r.status == 0, "\(r)")
            #expect((try FileManager.default.attributesOfItem(atPath: target)[.size] as? Int) == 8_388_608)
            #expect(try await net.ctl("a", "status").status == 0)
            #expect(try await net.ctl("b", "status").status == 0)
            #expect(try await net.ctl("a", "copy", stdin: "still copying").status == 0)
            stalled.cancel()
            _ = await stalled.result
        }
    }

    /// A paste here of a copy handoffd holds (`handoffctl copy`, then a paste on the same
    /// workstation) by an app that takes every byte and never sends its end: handoffd
    /// closes the connection after `HeldBytesPaste.endWait` seconds instead of keeping it.
    @Test(.timeLimit(.minutes(1))) func aLocalPasteThatNeverEndsIsClosed() async throws {
        try await withPair { net in
            #expect(try await net.ctl("a", "copy", stdin: "held here").status == 0)
            let a = HandoffClient(socketPath: net.socket("a"))
            let started = ContinuousClock.now
            let closed = ClosedAfter()
            // The client library's own end, sent after the body, then finds the connection
            // closed: that error is the point here.
            _ = try? await a.paste { stream in
                var got: [UInt8] = []
                while let bytes = try await stream.reader.read() { got += Array(buffer: bytes) }
                #expect(got == Array("held here".utf8))
                try await stream.reader.waitUntilClosed()
                closed.set(ContinuousClock.now - started)
            }
            let after = try #require(closed.get(), "the paste failed before handoffd closed it")
            // handoffd gives the app 10 s (HeldBytesPaste.endWait) to send its end.
            #expect(after >= .seconds(9), "closed after \(after), before the app had its time")
            #expect(try await net.ctl("a", "status").status == 0)
        }
    }

    final class ClosedAfter: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Duration?
        func set(_ d: Duration) { lock.withLock { value = d } }
        func get() -> Duration? { lock.withLock { value } }
    }

    /// A member gone bad (Tests/Fixtures/hostile-keeper: b's certificate and key in a
    /// program that writes messages by hand from PeerProtocol.md §19) announces junk, too
    /// much, and pulls what a never offered: capped and logged, refused, and a lives on.
    @Test func aHostilePeersClipboardIsCappedOrRefused() async throws {
        try await withPair { net in
            let idB = try await net.deviceID("b")
            #expect(try await net.ctl("a", "copy", stdin: "a's own").status == 0)
            let mine = try await newest(net, "a")!
            await net.kill("b", SIGTERM)
            try await eventually(15, "a to see b gone") { try await !net.isConnected("a", to: idB) }
            let address = try await net.address("a"), port = try net.peerPort("a")
            func send(_ which: String, _ extra: [String] = []) async throws -> [String: Any] {
                let r = try await net.exec("b", ["/usr/bin/python3", TestEnvironment.packageRoot + "/Tests/Fixtures/hostile-keeper", address, String(port),
                                                 "--cert", net.stateDirectory("b") + "/device-cert.pem", "--key", net.stateDirectory("b") + "/device-key.pem",
                                                 "--case", which] + extra)
                #expect(r.status == 0, "\(which): \(r)")
                return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
            }
            func log() -> String { (try? String(contentsOfFile: net.logPath("a"), encoding: .utf8)) ?? "" }

            // Pulls of what a did not offer: refused, nothing sent.
            let wrongType = try await send("clipboard-pull", ["--clipboard-id", mine.id.rawValue, "--type", "image/png"])
            #expect(wrongType["error"] as? String == "format-not-offered", "\(wrongType)")
            let wrongCopy = try await send("clipboard-pull", ["--clipboard-id", ClipboardID.random().rawValue, "--type", "text/plain;charset=utf-8"])
            #expect(wrongCopy["error"] as? String == "clipboard-changed", "\(wrongCopy)")

            // 3000 formats of junk: what is usable is kept (at most 32), the rest left out and
            // logged. Heard on a's event stream: the copy goes again when the link closes.
            let events = try await HandoffClient(socketPath: net.socket("a")).openSession()
            defer { events.close() }
            let heard = Task { () -> ClipboardRecord? in
                for try await event in events.events {
                    if case .clipboard(let r?) = event, !r.local { return r }
                }
                return nil
            }
            let junk = try await send("clipboard-junk")
            #expect(junk["error"] is NSNull && junk["closed"] as? Bool == false, "\(junk)")
            let theirs = try await heard.value
            let formats = theirs?.formats ?? []
            #expect(!formats.isEmpty && formats.count <= 32, "\(formats.count)")
            #expect(formats.allSatisfy { ClipboardFormat.isValidType($0.type) && ($0.size ?? 0) <= 64 << 20 && !$0.type.contains("big") }, "\(formats)")
            #expect(Set(formats.map(\.type)).count == formats.count)
            #expect(log().contains("left out formats of a peer's copy"))

            // More formats than any sender means: the message is malformed, the link closes.
            let flood = try await send("clipboard-flood")
            #expect(flood["error"] as? String == "malformed" && flood["closed"] as? Bool == true, "\(flood)")
            #expect(try await net.ctl("a", "status").status == 0)
            #expect(!log().contains("Fatal error"))
        }
    }

    /// An app that sends more than the size it announced: the paste fails, and says why.
    @Test func moreThanWasAnnouncedIsRefused() async throws {
        try await withPair { net in
            let a = HandoffClient(socketPath: net.socket("a"))
            let session = try await a.openSession()
            defer { session.close() }
            let record = try await a.announceClipboard([ClipboardFormat(type: "text/plain", size: 10)], session: session.token)
            try await waitForCopy(net, on: "b", record.id)
            let origin = Task {
                for try await event in session.events {
                    guard case .clipboardRequested(_, _, let streamID, _) = event else { continue }
                    try? await a.acceptStream(streamID) { stream in
                        try await stream.writer.write([UInt8](repeating: 65, count: 100_000))
                        try await stream.writer.finish()
                        while try await stream.reader.read() != nil {}
                    }
                }
            }
            defer { origin.cancel() }
            let r = try await net.ctl("b", "paste")
            #expect(r.status == 1 && r.stderr.contains("more than 10 bytes"), "\(r)")
            #expect(r.stdout.count <= 10)
        }
    }

    @Test func badClipboardRequestsChangeNothing() async throws {
        try await withPair(["--no-clipboard"]) { net in
            let a = HandoffClient(socketPath: net.socket("a"))
            let session = try await a.openSession()
            defer { session.close() }
            func refused(_ formats: [ClipboardFormat], _ token: String, _ code: String) async {
                do {
                    _ = try await a.announceClipboard(formats, session: token)
                    Issue.record("accepted \(formats)")
                } catch HandoffClientError.api(let e) {
                    #expect(e.code == code, "\(e)")
                } catch { Issue.record("\(error)") }
            }
            await refused((0...32).map { ClipboardFormat(type: "text/x-n\($0)", size: 1) }, session.token, "bad_request")
            await refused([ClipboardFormat(type: "UTF8_STRING", size: 1)], session.token, "bad_request")
            await refused([ClipboardFormat(type: "text/plain", size: -1)], session.token, "bad_request")
            await refused([ClipboardFormat(type: "image/png", size: 1 << 40)], session.token, "too_large")
            await refused([ClipboardFormat(type: "text/plain", size: 1)], "0123456789abcdef0123456789abcdef", "unknown_session")
            #expect(try await newest(net, "a") == nil)
            // Over what handoffd keeps itself: nothing copied, and it says why.
            let huge = try await net.exec("a", ["/bin/sh", "-c", "head -c 17000000 /dev/zero | HANDOFF_SOCKET=\(net.socket("a")) \(try TestEnvironment.binary("handoffctl")) copy"])
            #expect(huge.status == 1 && huge.stderr.contains("clipboard-held-max-bytes"), "\(huge)")
            #expect(try await newest(net, "a") == nil)
            #expect(try await net.ctl("a", "copy", "--type", "not a type", stdin: "x").status == 2)

            // b has the clipboard turned off: it neither takes a's copy nor copies itself.
            #expect(try await net.ctl("a", "copy", stdin: "for b?").status == 0)
            // 1 s: a copy reaches a linked workstation in well under that (the tests above).
            try await never(within: 1, because: "b, with the clipboard off, took a's copy") { try await newest(net, "b") != nil }
            let off = try await net.ctl("b", "copy", stdin: "x")
            #expect(off.status == 1 && off.stderr.contains("clipboard = no"), "\(off)")
            let pasteOff = try await net.ctl("b", "paste")
            #expect(pasteOff.status == 1 && pasteOff.stderr.contains("turned off"), "\(pasteOff)")
            // a still has its own copy, and its daemon still serves.
            #expect(try await net.ctl("a", "paste").stdout == "for b?")
        }
    }
}
}

/// Types asked for, in order, from any task.
final class AskedTypes: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ t: String) { lock.lock(); list.append(t); lock.unlock() }
    var types: [String] { lock.lock(); defer { lock.unlock() }; return list }
}
