import Foundation
import HandoffClient
import HandoffControlAPI
import HandoffTestSupport
import Testing

/// Pairing by code between two handoffds on loopback, dialled by address (no mDNS): after
/// a removal, the removed device cannot pair its way back in, and is told why (Security.md
/// 3.4).
@Suite struct PairingOnLoopbackTests {
    /// Both open their window, `dialler` dials `listener`, both confirm the code; returns
    /// once the dialler says paired.
    func pair(_ dialler: HandoffClient, _ listener: DaemonProcess) async throws {
        let other = HandoffClient(socketPath: listener.socketPath)
        _ = try await other.openPairing()
        _ = try await dialler.openPairing(address: "127.0.0.1:\(try await listener.peerPort())")
        try await confirmTheCode(dialler, other)
    }

    /// Waits until both show the same code, confirms it on both, and waits until both say
    /// paired.
    func confirmTheCode(_ x: HandoffClient, _ y: HandoffClient) async throws {
        var code = ""
        try await eventually(timeout: 20, "both to show a code") {
            let (a, b) = (try await x.pairingStatus(), try await y.pairingStatus())
            guard a.state == .code, b.state == .code, let c = a.code, c == b.code else { return false }
            code = c
            return true
        }
        _ = try await x.confirmPairing(code: code)
        _ = try await y.confirmPairing(code: code)
        try await eventually(timeout: 10, "both to say paired") {
            (try await x.pairingStatus().state, try await y.pairingStatus().state) == (.paired, .paired)
        }
    }

    @Test func aRemovedDeviceCannotPairAgain() async throws {
        let a = try await DaemonProcess(arguments: ["--name", "ws-a"]).start()
        let b = try await DaemonProcess(arguments: ["--name", "ws-b"]).start()
        defer { Task { await a.stop(); await b.stop() } }
        let ca = HandoffClient(socketPath: a.socketPath), cb = HandoffClient(socketPath: b.socketPath)
        let idB = try await cb.identity().deviceID
        try await pair(ca, b)
        #expect(try await ca.devices().members.contains { $0.id == idB })
        _ = try await ca.removeDevice(idB)

        // b tries again, dialled by a, then dialling a itself. (When b dialled, a's hello
        // and its refusal came so quickly that b's side once lost them with the connection:
        // b's status stayed `waiting` in about 1 run of 3.)
        for (dialler, listener, listenerClient) in [(ca, b, cb), (cb, a, ca)] {
            _ = try await listenerClient.openPairing()
            _ = try await dialler.openPairing(address: "127.0.0.1:\(try await listener.peerPort())")
            do {
                try await eventually(timeout: 20, "b to be told it was removed") {
                    let s = try await cb.pairingStatus()
                    if s.state == .code { throw TestFailure("a removed device got a code: \(s)") }
                    return s.state == .failed && (s.message ?? "").contains("removed from the account")
                }
            } catch {
                throw TestFailure("\(error): b dialled: \(listener === a), b says \(try await cb.pairingStatus()), a says \(try await ca.pairingStatus())")
            }
            #expect(try await ca.pairingStatus().state != .code)
            _ = try await ca.cancelPairing()
            _ = try await cb.cancelPairing()
        }
        #expect(a.log().components(separatedBy: "refused to pair with a device removed from the account").count == 3)
        let devices = try await ca.devices()
        #expect(!devices.members.contains { $0.id == idB } && devices.removed.contains { $0.id == idB })
        #expect(try await ca.peers().contains { $0.id == idB && $0.trusted } == false)
        // Stopped here, not only by the deferred task, which may not run before the test
        // process ends.
        await a.stop()
        await b.stop()
    }

    /// `pair --address` on b before `pair` on a: a's TLS refuses a stranger while it is not
    /// pairing, b says so (and that it still waits) and dials again; once a opens its window
    /// they show a code and pair. The order in which the users run `pair` does not matter.
    @Test func pairingDialsAgainUntilTheOtherIsPairing() async throws {
        let a = try await DaemonProcess(arguments: ["--name", "ws-a"]).start()
        let b = try await DaemonProcess(arguments: ["--name", "ws-b"]).start()
        let ca = HandoffClient(socketPath: a.socketPath), cb = HandoffClient(socketPath: b.socketPath)
        _ = try await cb.openPairing(address: "127.0.0.1:\(try await a.peerPort())")
        try await eventually(timeout: 10, "b to say a is not pairing") {
            let s = try await cb.pairingStatus()
            return s.state == .failed && (s.message ?? "").contains("is not pairing now") && s.expiresAt != nil
        }
        // Not at every dial again: the log says it once, over 5 s of redials.
        let failures = { b.log().components(separatedBy: "could not pair with the workstation dialled").count - 1 }
        try await eventually("b to log that it could not pair") { failures() == 1 }
        try await never(within: 5, because: "b logged its failure to pair again at a redial") { failures() > 1 }
        _ = try await ca.openPairing()
        try await confirmTheCode(cb, ca)
        await a.stop()
        await b.stop()
    }
}

