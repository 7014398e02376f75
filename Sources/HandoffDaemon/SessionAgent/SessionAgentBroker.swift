import HandoffCore
import HandoffControlAPI
import NIOCore
import NIOPosix

/// What only the session agent can do: opening apps (it lives in the graphical session;
/// handoffd may run headless), and the desktop sources of activities (media players,
/// recent documents, the browser). The agent takes the launcher role with its event
/// session; handoffd sends it a request as an event (`launch-requested`,
/// `sources-requested`) and waits for its answer (`/v1/launches/{id}`,
/// `/v1/source-answers/{id}`). No agent, an agent that goes away, or no answer in time:
/// the request fails with a reason (for a launch, the continue itself still stands).
public actor SessionAgentBroker {
    enum Kind: Sendable { case launch, sources }

    struct Failure: Error, Sendable {
        let code: String
        let message: String
    }

    private struct Waiting {
        let token: String
        let kind: Kind
        let continuation: CheckedContinuation<Result<JSONValue, Failure>, Never>
        let timer: ScheduledTimer
    }

    static let noAgent = "no session agent is running: start it with `systemctl --user start handoff-session` (it needs a graphical session)"

    private let registry: ActivityRegistry
    let timeout: TimeAmount
    let sourcesTimeout: TimeAmount
    private let timers: any Timers
    private var launcher: String?
    private var waiting: [String: Waiting] = [:]

    /// A launch may wait for a player to start or a document to be fetched; the sources
    /// answer at once.
    init(registry: ActivityRegistry, timers: any Timers, timeout: TimeAmount = .seconds(60), sourcesTimeout: TimeAmount = .seconds(10)) {
        self.registry = registry
        self.timers = timers
        self.timeout = timeout
        self.sourcesTimeout = sourcesTimeout
    }

    var hasLauncher: Bool { launcher != nil }

    /// The newest claim wins: a restarted agent replaces the old one at once.
    func claim(session token: String) async throws(HandoffError) {
        guard await registry.isSessionOpen(token) else {
            throw HandoffError(.conflict, code: "unknown_session", message: "no open event session \(token); open GET /v1/events first and claim with its token")
        }
        launcher = token
    }

    func launch(_ record: ActivityRecord, from device: PeerDevice) async -> LaunchOutcome {
        let answer = await ask(.launch, timeout: timeout, noAgent: "no_launcher") {
            .launchRequested(launchID: $0, activity: record, device: device)
        }
        switch answer {
        case .failure(let f): return .failed(code: f.code, message: f.message)
        case .success(let json):
            do { return try LaunchOutcome(json: json) } catch { return .failed(code: "bad_answer", message: "the session agent's answer: \(error)") }
        }
    }

    /// What the agent's sources do, after `change` if one is given.
    func sources(_ change: DesktopSourceChange?) async throws(HandoffError) -> [DesktopSource] {
        let answer = await ask(.sources, timeout: sourcesTimeout, noAgent: "no_session_agent") {
            .sourcesRequested(requestID: $0, change: change)
        }
        switch answer {
        case .failure(let f):
            let kind: HandoffError.Kind = switch f.code {
            case "no_session_agent": .unavailable
            case "agent_timeout": .peerTimedOut
            case "unknown_source": .notFound
            default: .peerFailed
            }
            throw HandoffError(kind, code: f.code, message: f.message)
        case .success(let json):
            do { return try DesktopSource.list(json: json) } catch {
                throw HandoffError(.peerFailed, code: "bad_answer", message: "the session agent's answer: \(error)")
            }
        }
    }

    /// The agent's answer (validated by the router); false when nothing of `kind` waits for `id`.
    func answer(_ id: String, _ kind: Kind, _ result: Result<JSONValue, Failure>) -> Bool {
        guard waiting[id]?.kind == kind else { return false }
        resolve(id, result)
        return true
    }

    func sessionClosed(_ token: String) {
        if launcher == token { launcher = nil }
        for (id, w) in waiting where w.token == token {
            resolve(id, .failure(Failure(code: w.kind == .launch ? "no_launcher" : "no_session_agent",
                                         message: "the session agent went away before it answered")))
        }
    }

    func shutdown() {
        for id in Array(waiting.keys) { resolve(id, .failure(Failure(code: "shutting_down", message: "handoffd is shutting down"))) }
    }

    private func ask(_ kind: Kind, timeout: TimeAmount, noAgent code: String,
                     _ event: @escaping @Sendable (String) -> ControlEvent) async -> Result<JSONValue, Failure> {
        guard let token = launcher else { return .failure(Failure(code: code, message: Self.noAgent)) }
        let id = ActivityID.random().rawValue
        let registry = self.registry
        return await withCheckedContinuation { c in
            let timer = timers.schedule(in: .nanoseconds(timeout.nanoseconds)) {
                let seconds = Double(timeout.nanoseconds) / 1e9
                _ = Task {
                    await self.resolve(id, .failure(Failure(code: kind == .launch ? "launch_timeout" : "agent_timeout",
                                                            message: "the session agent did not answer within \(seconds) s")))
                }
            }
            waiting[id] = Waiting(token: token, kind: kind, continuation: c, timer: timer)
            Task {
                let sent = await registry.send(event(id), toSession: token)
                if !sent { self.resolve(id, .failure(Failure(code: code, message: "the session agent went away"))) }
            }
        }
    }

    private func resolve(_ id: String, _ result: Result<JSONValue, Failure>) {
        guard let w = waiting.removeValue(forKey: id) else { return }
        w.timer.cancel()
        w.continuation.resume(returning: result)
    }
}
