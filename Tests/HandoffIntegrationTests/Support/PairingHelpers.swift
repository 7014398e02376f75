import Foundation
import HandoffTestSupport

extension NetnsRun {
    /// The 6-digit code in `handoffctl pair` output ("Code: 123 456 ...").
    static func pairingCode(in log: String) -> String? {
        guard let line = log.split(separator: "\n").first(where: { $0.hasPrefix("Code: ") }) else { return nil }
        let digits = line.dropFirst(6).prefix(7).filter(\.isNumber)
        return digits.count == 6 ? String(digits) : nil
    }

    /// Pairs `x` and `y` the way a user does: `handoffctl pair` on both, then each
    /// confirms the code it shows. Returns when both say they are paired. `options` are
    /// more arguments of a host's `handoffctl pair` (`--new-identity`).
    func pairByCode(_ x: String, _ y: String, options: [String: [String]] = [:]) async throws {
        let handoffctl = try TestEnvironment.binary("handoffctl")
        // Logs of their own: a second pairing of the same two must not read the first's code.
        let attempt = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let logs = [x: directory + "/pair-\(x)-\(y)-\(attempt)-\(x).log", y: directory + "/pair-\(x)-\(y)-\(attempt)-\(y).log"]
        let px = try await spawn(x, log: logs[x]!, [handoffctl, "pair"] + (options[x] ?? []))
        let py = try await spawn(y, log: logs[y]!, [handoffctl, "pair"] + (options[y] ?? []))
        func read(_ h: String) -> String { (try? String(contentsOfFile: logs[h]!, encoding: .utf8)) ?? "" }
        var codes: [String: String] = [:]
        do {
            try await eventually(30, "\(x) and \(y) to show a pairing code") {
                codes[x] = NetnsRun.pairingCode(in: read(x))
                codes[y] = NetnsRun.pairingCode(in: read(y))
                return codes.count == 2
            }
        } catch {
            throw TestFailure("\(error)\n--- \(x) ---\n\(read(x))\n--- \(y) ---\n\(read(y))")
        }
        guard codes[x] == codes[y] else { throw TestFailure("codes differ: \(codes)") }
        let code = codes[x]!
        async let cx = ctl(x, "pair", "--code", code)
        async let cy = ctl(y, "pair", "--code", code)
        let (rx, ry) = try await (cx, cy)
        guard rx.status == 0, ry.status == 0 else { throw TestFailure("confirming: \(rx)\n\(ry)") }
        _ = try await wait(px, timeout: 10)
        _ = try await wait(py, timeout: 10)
    }
}
