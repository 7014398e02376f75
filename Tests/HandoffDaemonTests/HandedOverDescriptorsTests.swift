import Glibc
import HandoffCore
import Testing
@testable import HandoffDaemon

/// What an app may hand over for a stream (§15.8), and who closes it when: the broker
/// keeps it for a stream waiting for its owner, and closes it if the stream is never
/// taken. Whether a descriptor was closed is seen from its socket pair's other end (an
/// EOF), not by its number, which another test may reuse at once.
@Suite("Handed-over descriptors")
struct HandedOverDescriptorsTests {
    func socketPair() -> (CInt, CInt) {
        var p: [CInt] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &p) == 0)
        return (p[0], p[1])
    }

    /// True once the other end of `peer`'s pair is closed (a read sees EOF at once).
    /// Whether the other end closed, waiting up to `waiting` ms for it (a close made on
    /// another thread may land just after the call that caused it returns).
    func closedAcross(_ peer: CInt, waiting: Int32 = 2000) -> Bool {
        var pfd = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, waiting) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(peer, &byte, 1, Int32(MSG_DONTWAIT)) == 0
    }

    @Test func onlyStreamsAndFilesAreTakenEachTheRightWay() throws {
        var fds: [CInt] = [0, 0]
        precondition(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd); close(writeEnd) }
        func check(_ given: [CInt]) -> String? {
            // check() closes what it refuses: hand it duplicates.
            switch HandedOverDescriptors.check(given.map { dup($0) }) {
            case .success(let d):
                d.close()
                return nil
            case .failure(let e): return e.message
            }
        }
        #expect(check([readEnd]) == nil)
        #expect(check([readEnd, writeEnd]) == nil)
        let file = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC)
        defer { close(file) }
        #expect(check([file]) == nil, "a regular file is a source")
        #expect(check([writeEnd])?.contains("not open for reading") == true)
        #expect(check([readEnd, readEnd])?.contains("not open for writing") == true)
        #expect(check([readEnd, file])?.contains("sink must be") == true)
        let dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(dir) }
        #expect(check([dir])?.contains("source must be") == true)
        #expect(check([])?.contains("0 arrived") == true)
        #expect(check([readEnd, writeEnd, readEnd])?.contains("3 arrived") == true)
    }

    @Test func descriptorsForAStreamNeverTakenAreClosedAtItsDeadline() async throws {
        let time = ManualTime()
        let registry = ActivityRegistryTimeTests.registry(time)
        let broker = StreamBroker(registry: registry, acceptTimeout: .seconds(10), timers: time)
        let (token, stream) = await registry.openSession()
        var events = stream.makeAsyncIterator()
        async let result = broker.askOwner(activityID: ActivityID.random(), session: token, device: PeerDevice(id: "x", name: "laptop"))
        var streamID: String?
        while let e = await BrokerTimeTests.next(&events) {
            if case .streamRequested(_, let id, _) = e { streamID = id; break }
        }
        let id = try #require(streamID)

        let (source, sourcePeer) = socketPair()
        defer { close(sourcePeer) }
        #expect(await broker.handOver(id, try HandedOverDescriptors.check([source]).get()) == nil)
        // A second handover for the same stream is refused, and its descriptor closed.
        let (again, againPeer) = socketPair()
        defer { close(againPeer) }
        #expect(await broker.handOver(id, try HandedOverDescriptors.check([again]).get())?.code == "bad_request")
        #expect(closedAcross(againPeer))
        // For a stream nobody asked for: refused and closed.
        let (stray, strayPeer) = socketPair()
        defer { close(strayPeer) }
        #expect(await broker.handOver(ActivityID.random().rawValue, try HandedOverDescriptors.check([stray]).get())?.code == "unknown_stream")
        #expect(closedAcross(strayPeer))

        #expect(!closedAcross(sourcePeer, waiting: 0), "kept while the stream waits")
        time.advance(by: .seconds(10))
        guard case .failure(let failure) = await result else { Issue.record("not taken, so no stream"); return }
        #expect(failure.code == "stream_timeout")
        #expect(closedAcross(sourcePeer), "closed when the stream was never taken")
    }
}
