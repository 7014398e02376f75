import Foundation
import HandoffClient
import HandoffCore
import HandoffControlAPI
import HandoffTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The account under the same kills: handoffd pairs by code with one new workstation
/// after another (each a real handoffd on loopback, dialled with `address`) and removes
/// earlier ones, and is killed at random moments of that. Every member it said it paired
/// with, and every removal it acknowledged, is in `account.json` after the restart.
extension CrashConsistencyTests {
    final class AccountAcknowledged: @unchecked Sendable {
        private let lock = NSLock()
        private var _killed = false
        var members: [String] = []
        var removed: Set<String> = []
        /// A removal asked for and not yet answered: the kill may land after it was written
        /// and before its answer, and then the member is gone, rightly.
        var removing: String?
        var adds = 0, removals = 0
        var unexpected: [String] = []
        var helpers: [DaemonProcess] = []
        /// Kill the daemon the moment it acknowledges a change (the worst moment for a
        /// change whose flush is still queued), rather than at a random one.
        var killOnAcknowledgement: Int32?
        /// Statements this device may sign before the writer stops pairing (AccountLog
        /// takes 64 from each signer).
        var cap = 52
        var removes = true
        var killed: Bool { lock.withLock { _killed } }
        func kill() { lock.withLock { _killed = true } }
        func with<T>(_ body: (AccountAcknowledged) -> T) -> T { lock.withLock { body(self) } }
        func failed(_ what: String, _ error: any Error) {
            lock.withLock { if !_killed { unexpected.append("\(what): \(error)") } }
        }
    }

    /// Until the kill: pair with a new workstation; now and then remove the oldest member
    /// (the first side to confirm alternates, so that both ways of ending the exchange
    /// are acknowledged).
    func pairAndRemove(_ client: HandoffClient, _ ack: AccountAcknowledged, _ n: Int) async {
        var n = n
        while !ack.killed {
            n += 1
            // A device signs at most 64 account statements (AccountLog): one to add each
            // member, one more to remove it. Stay below.
            if ack.with({ $0.members.count + 2 * $0.removed.count >= $0.cap }) { try? await Task.sleep(for: .milliseconds(50)); continue }
            do {
                let helper = try DaemonProcess(arguments: ["--name", "helper-\(n)"])
                ack.with { $0.helpers.append(helper) }
                try await helper.start()
                let port = try await helper.peerPort()
                let other = HandoffClient(socketPath: helper.socketPath)
                let helperID = try await other.identity().deviceID
                _ = try await other.openPairing()
                _ = try await client.openPairing(address: "127.0.0.1:\(port)")
                var code = ""
                try await eventually(timeout: 20, "both to show a code") {
                    let (a, b) = (try await client.pairingStatus(), try await other.pairingStatus())
                    if a.state == .failed || b.state == .failed { throw TestFailure("pairing failed: \(a) / \(b)") }
                    guard a.state == .code, b.state == .code, let c = a.code, c == b.code else { return false }
                    code = c
                    return true
                }
                var paired: Bool
                if n % 2 == 0 {
                    paired = try await client.confirmPairing(code: code).state == .paired
                    _ = try await other.confirmPairing(code: code)
                } else {
                    _ = try await other.confirmPairing(code: code)
                    paired = try await client.confirmPairing(code: code).state == .paired
                }
                // What a user watching `handoffctl pair` is told: paired.
                while !paired && !ack.killed {
                    let status = try await client.pairingStatus()
                    if status.state == .failed || status.state == .closed { throw TestFailure("pairing ended without pairing: \(status)") }
                    paired = status.state == .paired
                    if !paired { try await Task.sleep(for: .milliseconds(5)) }
                }
                if paired {
                    ack.with { $0.members.append(helperID); $0.adds += 1 }
                    if let pid = ack.killOnAcknowledgement { ack.kill(); Glibc.kill(pid, SIGKILL) }
                }
                await helper.stop()
                let oldest = ack.with { $0.removes && $0.members.count > 2 && n % 3 != 0 ? $0.members.first : nil }
                if let oldest {
                    ack.with { $0.removing = oldest }
                    _ = try await client.removeDevice(oldest)
                    ack.with { $0.members.removeFirst(); $0.removed.insert(oldest); $0.removals += 1; $0.removing = nil }
                    if let pid = ack.killOnAcknowledgement, n % 2 == 0 { ack.kill(); Glibc.kill(pid, SIGKILL) }
                }
            } catch { ack.failed("pairing \(n)", error); return }
        }
    }

    @Test func killedAtRandomMomentsTheAccountKeepsEveryAcknowledgedChange() async throws {
        let daemon = try DaemonProcess()
        let client = HandoffClient(socketPath: daemon.socketPath)
        let seed = Self.seed()
        var rng = SplitMix(seed)
        var members: [String] = [], removed: Set<String> = []
        var kills = 0, adds = 0, removals = 0, files = 0
        var lost: [String] = []
        // At least 20 kills and enough of each change to tell (a slow build, as under a
        // sanitizer, pairs less in each round), below the cap of statements.
        while (kills < 20 || adds < 20 || removals < 8) && kills < 80 && members.count + 2 * removed.count < 52 {
            try await daemon.start()
            let ack = AccountAcknowledged()
            ack.members = members
            ack.removed = removed
            let first = kills * 1000
            // Every other round ends at an acknowledgement.
            if kills % 2 == 1 { ack.killOnAcknowledgement = daemon.pid }
            let writer = Task { await pairAndRemove(client, ack, first) }
            // A pairing takes a third of a second here now that helpers start as soon as
            // they are ready, and all the rounds share 52 statements: kill within the first
            // pairing or two (20 kills; with 4 s, the cap ended the test after 3 to 7).
            let wait = Int(rng.next() % 600)
            if ack.killOnAcknowledgement != nil {
                for _ in 0..<200 where !ack.killed { try await Task.sleep(for: .milliseconds(50)) }
            } else {
                try await Task.sleep(for: .milliseconds(wait))
            }
            let helpers = Self.children(of: daemon.pid)
            ack.kill()
            daemon.signal(SIGKILL)
            for h in helpers { kill(h, SIGKILL) }
            await daemon.crash()
            await writer.value
            for h in ack.with({ $0.helpers }) { await h.crash() }
            kills += 1
            #expect(ack.unexpected.isEmpty, "round \(kills): failed before the kill: \(ack.unexpected)\n\(daemon.log())")
            adds += ack.with { $0.adds }
            removals += ack.with { $0.removals }

            try await daemon.start()
            files += try checkFiles(daemon)
            let devices = try await client.devices()
            let now = Set(devices.members.map(\.id)), gone = Set(devices.removed.map(\.id))
            let inFlight = ack.with { $0.removing }
            for id in ack.members where !now.contains(id) && !(id == inFlight && gone.contains(id)) { lost.append("member \(id) (round \(kills))") }
            for id in ack.removed where !gone.contains(id) || now.contains(id) { lost.append("removal of \(id) (round \(kills))") }
            // What is there now (including what was in flight) is what the next round expects.
            members = devices.members.filter { !$0.isSelf }.map(\.id)
            removed = gone
            await daemon.stop()
        }
        print("crash consistency of the account (seed \(seed)): \(kills) kills, \(adds) pairings and \(removals) removals acknowledged, \(files) state files parsed, \(lost.count) lost")
        #expect(adds >= 20 && removals >= 8, "too few account changes to tell: \(adds) pairings, \(removals) removals")
        try await daemon.start()
        _ = try checkPrivate(daemon)
        #expect(FileManager.default.fileExists(atPath: daemon.stateDirectory + "/account.json"))
        await daemon.stop()
        // At the cap, pairing is refused up front, saying what to do instead (before, the
        // two trusted each other and no other member heard of it).
        try await daemon.start()
        let last = AccountAcknowledged()
        (last.members, last.removed, last.cap, last.removes) = (members, removed, .max, false)
        await pairAndRemove(client, last, 900_000)
        let refusal = last.unexpected.joined()
        #expect(last.unexpected.count == 1 && refusal.contains("the most one device may") && refusal.contains("another member"), "\(last.unexpected)")
        #expect([.closed, .paired].contains(try await client.pairingStatus().state), "no window opened")
        await daemon.stop()
        #expect(lost.isEmpty, "lost after a kill: \(lost)")
    }
}
