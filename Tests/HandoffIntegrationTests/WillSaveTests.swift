import HandoffClient
import HandoffCore
import Testing

/// needsSave: a fresh snapshot asks the owner to save and serves what it saved, or the
/// last payload marked stale when it stays silent.
@Suite struct WillSaveTests {
    @Test func liveOwnerRefreshesThePayload() async throws {
        // A generous deadline: the owner answers at once, the wait ends with its answer.
        let daemon = try await DaemonProcess(arguments: ["--will-save-timeout-ms", "10000"]).start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let owner = try await client.openSession()
        var d = ActivityDraft(activityType: "com.example.player")
        d.userInfo = ["position": .double(1.5)]
        d.needsSave = true
        let a = try await client.becomeCurrent(d, session: owner.token)
        let answering = Task {
            for try await event in owner.events {
                if case .willSave(let id, _) = event, id == a.activity.id {
                    var u = ActivityUpdate()
                    u.userInfo = ["position": .double(42.25)]
                    u.userInfoMode = .replace
                    _ = try await client.update(id.rawValue, u)
                    return true
                }
            }
            return false
        }
        let snap = try await client.snapshot(a.activity.id.rawValue)
        #expect(try await answering.value)
        #expect(snap.stale == false)
        #expect(snap.activity.userInfo == ["position": .double(42.25)])
        #expect(snap.activity.needsSave == false)
        #expect(try await client.current()?.activity.needsSave == false)
        // needsSave cleared: the next snapshot does not ask again and is not stale.
        let again = try await client.snapshot()
        #expect(again.stale == false)
        owner.close()
    }

    @Test func silentOwnerGetsTheLastPayloadMarkedStale() async throws {
        let daemon = try await DaemonProcess(arguments: ["--will-save-timeout-ms", "300"]).start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let owner = try await client.openSession()  // never answers
        var d = ActivityDraft(activityType: "com.example.silent")
        d.userInfo = ["position": .integer(7)]
        d.needsSave = true
        let a = try await client.becomeCurrent(d, session: owner.token)
        let snap = try await client.snapshot(a.activity.id.rawValue)
        #expect(snap.stale == true)
        #expect(snap.activity.userInfo == ["position": .integer(7)])
        #expect(snap.activity.needsSave == true)
        // The activity is unharmed: still current, still updatable.
        #expect(try await client.current()?.activity.id == a.activity.id)
        owner.close()
    }

    @Test func concurrentSnapshotsShareOneSave() async throws {
        let daemon = try await DaemonProcess(arguments: ["--will-save-timeout-ms", "10000"]).start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let owner = try await client.openSession()
        let ownerEvents = EventRecorder(owner)
        var d = ActivityDraft(activityType: "com.example.shared")
        d.needsSave = true
        let a = try await client.becomeCurrent(d, session: owner.token)
        async let s1 = client.snapshot(a.activity.id.rawValue)
        async let s2 = client.snapshot(a.activity.id.rawValue)
        _ = try await ownerEvents.waitFor("will-save") { $0.name == "will-save" }
        // No fact to wait on: handoffd shows nothing when a snapshot joins a pending save.
        // 100 ms lets the second request reach it before the owner answers (if it came
        // after, it is served fresh without a will-save, and the test passes all the same).
        try await Task.sleep(nanoseconds: 100_000_000)
        var u = ActivityUpdate()
        u.userInfo = ["fresh": .boolean(true)]
        _ = try await client.update(a.activity.id.rawValue, u)
        let (r1, r2) = try await (s1, s2)
        #expect(r1.activity.userInfo["fresh"] == .boolean(true))
        #expect(r2.activity.userInfo["fresh"] == .boolean(true))
        #expect(await ownerEvents.names().filter { $0 == "will-save" }.count == 1)
        owner.close()
    }

    @Test func daemonOwnedActivityNeedingSaveIsServedStale() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        var d = ActivityDraft(activityType: "com.example.noowner")
        d.needsSave = true
        _ = try await client.becomeCurrent(d)
        let snap = try await client.snapshot()
        #expect(snap.stale == true)
        let fresh = try await client.becomeCurrent(ActivityDraft(activityType: "com.example.clean"))
        #expect(try await client.snapshot(fresh.activity.id.rawValue).stale == false)
    }
}
