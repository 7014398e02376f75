import HandoffClient
import HandoffCore
import Testing

/// become-current, displacement, resign, update, invalidate and expiry, against a real
/// handoffd through its Unix socket.
@Suite struct ActivityLifecycleTests {
    func draft(_ type: String, _ info: UserInfo = [:]) -> ActivityDraft {
        var d = ActivityDraft(activityType: type)
        d.title = "T " + type
        d.userInfo = info
        return d
    }

    @Test func becomeCurrentThenReadBack() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        #expect(try await client.current() == nil)
        let info: UserInfo = ["page": .integer(12), "ratio": .double(1.0), "when": .date(Timestamp(seconds: 1_700_000_000, nanoseconds: 123_456_789)),
                              "blob": .data([0, 1, 2, 255]), "link": .url("file:///tmp/x"), "tags": .set([.string("a"), .string("b")]),
                              "nested": .dictionary(["list": .array([.null, .boolean(true), .string("ü")])])]
        let made = try await client.becomeCurrent(draft("com.example.editor.edit-note", info))
        #expect(made.state == .current)
        #expect(made.owner == "daemon")
        #expect(made.activity.origin.name == "test-device")
        let current = try #require(try await client.current())
        #expect(current.activity == made.activity)
        #expect(current.activity.userInfo == info)
        #expect(current.payloadSize == ActivityPropertyList.encodedSize(of: made.activity))
        let status = try await client.status()
        #expect(status.current?.activity.id == made.activity.id)
        #expect(status.deviceName == "test-device")
    }

    @Test func newActivityDisplacesTheCurrentOne() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let watcher = EventRecorder(try await client.openSession())
        let first = try await client.becomeCurrent(draft("com.example.one"))
        let second = try await client.becomeCurrent(draft("com.example.two"))
        #expect(try await client.current()?.activity.id == second.activity.id)
        #expect(try await client.activity(first.activity.id.rawValue).state == .resigned)
        _ = try await watcher.waitFor("resigned first") {
            if case .resigned(let r) = $0 { return r.activity.id == first.activity.id } else { return false }
        }
        _ = try await watcher.waitFor("second became current") {
            if case .becameCurrent(let r) = $0 { return r.activity.id == second.activity.id } else { return false }
        }
        // The displaced one can become current again.
        let again = try await client.becomeCurrent(existing: first.activity.id.rawValue)
        #expect(again.state == .current)
        #expect(try await client.activity(second.activity.id.rawValue).state == .resigned)
    }

    @Test func resignKeepsTheActivityAlive() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let a = try await client.becomeCurrent(draft("com.example.resign"))
        let r = try await client.resign()
        #expect(r.state == .resigned)
        #expect(try await client.current() == nil)
        let updated = try await client.update(a.activity.id.rawValue, { var u = ActivityUpdate(); u.title = "still here"; return u }())
        #expect(updated.activity.title == "still here")
        await #expect(throws: HandoffClientError.self) { _ = try await client.resign() }  // nothing current
    }

    @Test func updateMergesOrReplaces() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let a = try await client.becomeCurrent(draft("com.example.update", ["a": .integer(1), "b": .integer(2)]))
        var merge = ActivityUpdate()
        merge.userInfo = ["b": .integer(20), "c": .integer(3)]
        var r = try await client.update(a.activity.id.rawValue, merge)
        #expect(r.activity.userInfo == ["a": .integer(1), "b": .integer(20), "c": .integer(3)])
        var replace = ActivityUpdate()
        replace.userInfo = ["z": .string("only")]
        replace.userInfoMode = .replace
        r = try await client.update("current", replace)
        #expect(r.activity.userInfo == ["z": .string("only")])
        var remove = ActivityUpdate()
        remove.removeUserInfoKeys = ["z"]
        remove.webpageURL = .some("https://example.org/x")
        r = try await client.update("current", remove)
        #expect(r.activity.userInfo.isEmpty)
        #expect(r.activity.webpageURL == "https://example.org/x")
        var clear = ActivityUpdate()
        clear.webpageURL = .some(nil)
        r = try await client.update("current", clear)
        #expect(r.activity.webpageURL == nil)
        #expect(r.activity.updatedAt > a.activity.updatedAt)
        // An expiration date already past is refused (invalidate is how to end it now).
        var past = ActivityUpdate()
        past.expirationDate = .some(SystemClock.now().adding(nanoseconds: -1_000_000_000))
        await #expect(throws: HandoffClientError.self) { _ = try await client.update("current", past) }
        #expect(try await client.current()?.state == .current)
        // An invalid update is refused and changes nothing.
        var bad = ActivityUpdate()
        bad.webpageURL = .some("ftp://example.org/")
        bad.title = "should not stick"
        await #expect(throws: HandoffClientError.self) { _ = try await client.update("current", bad) }
        #expect(try await client.current()?.activity.title == r.activity.title)
    }

    @Test func invalidateIsFinal() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let a = try await client.becomeCurrent(draft("com.example.final"))
        let id = a.activity.id.rawValue
        let r = try await client.invalidate(id)
        #expect(r.state == .invalidated)
        #expect(try await client.current() == nil)
        for call in [
            { _ = try await client.update(id, ActivityUpdate()) },
            { _ = try await client.becomeCurrent(existing: id) },
            { _ = try await client.resign(id) },
            { _ = try await client.invalidate(id) },
            { _ = try await client.snapshot(id) },
        ] as [@Sendable () async throws -> Void] {
            do {
                try await call()
                Issue.record("a call on an invalidated activity succeeded")
            } catch HandoffClientError.api(let e) {
                #expect(e.status == 410)
                #expect(e.code == "invalidated")
                #expect(e.message.contains("invalidated"))
            }
        }
        #expect(try await client.activity(id).state == .invalidated)
    }

    @Test func expiredActivityStopsBeingCurrent() async throws {
        let daemon = try await DaemonProcess().start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let watcher = EventRecorder(try await client.openSession())
        var d = draft("com.example.expiring")
        // Far enough ahead that the request itself, on a loaded machine, cannot outlast it
        // (at 1.2 s a parallel full run saw it refused as already past).
        d.expirationDate = SystemClock.now().adding(nanoseconds: 3_000_000_000)
        let a = try await client.becomeCurrent(d)
        let e = try await watcher.waitFor("expired") {
            if case .expired(let r) = $0 { return r.activity.id == a.activity.id } else { return false }
        }
        guard case .expired(let r) = e else { return }
        #expect(r.state == .expired)
        #expect(try await client.current() == nil)
        do {
            _ = try await client.update(a.activity.id.rawValue, ActivityUpdate())
            Issue.record("update of an expired activity succeeded")
        } catch HandoffClientError.api(let e) {
            #expect(e.code == "expired")
        }
        // An expiration date already past is refused up front.
        var past = draft("com.example.past")
        past.expirationDate = SystemClock.now().adding(nanoseconds: -1_000_000_000)
        await #expect(throws: HandoffClientError.self) { _ = try await client.becomeCurrent(past) }
    }

    @Test func sizeCapIsEnforcedWithAdvice() async throws {
        let daemon = try await DaemonProcess(arguments: ["--max-activity-bytes", "2048"]).start()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let ok = try await client.becomeCurrent(draft("com.example.small", ["d": .data([UInt8](repeating: 7, count: 1500))]))
        do {
            _ = try await client.becomeCurrent(draft("com.example.big", ["d": .data([UInt8](repeating: 7, count: 3000))]))
            Issue.record("an activity over the cap was accepted")
        } catch HandoffClientError.api(let e) {
            #expect(e.status == 422)
            #expect(e.message.contains("continuation stream"))
            #expect(e.message.contains("2048"))
        }
        #expect(try await client.current()?.activity.id == ok.activity.id)
    }
}
