import HandoffCore
import HandoffWire
import NIOCore
import NIOPosix

/// Opening apps is the session agent's business (it lives in the graphical session;
/// handoffd may run headless). The agent takes the launcher role with its event session;
/// continuing with `launch` sends it `launch-requested` and waits for its answer at
/// `/v1/launches/{id}`. No agent, an agent that goes away, or no answer in time: the
/// launch fails with a reason, and the continue itself still stands.
public actor LaunchBroker {
    private struct Waiting {
        let token: String
        let continuation: CheckedContinuation<LaunchOutcome, Never>
        let timer: Scheduled<Void>
    }

    private let registry: ActivityRegistry
    let timeout: TimeAmount
    private let timers: EventLoop = MultiThreadedEventLoopGroup.singleton.any()
    private var launcher: String?
    private var waiting: [String: Waiting] = [:]

    /// Long enough for a player to start or a document to be fetched.
    public init(registry: ActivityRegistry, timeout: TimeAmount = .seconds(60)) {
        self.registry = registry
        self.timeout = timeout
    }

    var hasLauncher: Bool { launcher != nil }

    /// The newest claim wins: a restarted agent replaces the old one at once.
    func claim(session token: String) async throws(APIError) {
        guard await registry.isSessionOpen(token) else {
            throw APIError(status: 409, code: "unknown_session", message: "no open event session \(token); open GET /v1/events first and claim with its token")
        }
        launcher = token
    }

    func launch(_ record: ActivityRecord, from device: PeerDevice) async -> LaunchOutcome {
        guard let token = launcher else {
            return .failed(code: "no_launcher", message: "no session agent is running to open apps: start it with `systemctl --user start handoff-session` (it needs a graphical session)")
        }
        let launchID = ActivityID.random().rawValue
        let registry = self.registry
        return await withCheckedContinuation { c in
            let timer = timers.scheduleTask(in: timeout) {
                _ = Task { await self.resolve(launchID, .failed(code: "launch_timeout", message: "the session agent did not say what it opened within \(Double(self.timeout.nanoseconds) / 1e9) s")) }
            }
            waiting[launchID] = Waiting(token: token, continuation: c, timer: timer)
            Task {
                let sent = await registry.send(.launchRequested(launchID: launchID, activity: record, device: device), toSession: token)
                if !sent { self.resolve(launchID, .failed(code: "no_launcher", message: "the session agent went away")) }
            }
        }
    }

    /// The agent's answer; false when nothing waits for `launchID`.
    func answer(_ launchID: String, _ outcome: LaunchOutcome) -> Bool {
        guard waiting[launchID] != nil else { return false }
        resolve(launchID, outcome)
        return true
    }

    func sessionClosed(_ token: String) {
        if launcher == token { launcher = nil }
        for (id, w) in waiting where w.token == token {
            resolve(id, .failed(code: "no_launcher", message: "the session agent went away before it opened anything"))
        }
    }

    func shutdown() {
        for id in Array(waiting.keys) { resolve(id, .failed(code: "shutting_down", message: "handoffd is shutting down")) }
    }

    private func resolve(_ launchID: String, _ outcome: LaunchOutcome) {
        guard let w = waiting.removeValue(forKey: launchID) else { return }
        w.timer.cancel()
        w.continuation.resume(returning: outcome)
    }
}
