import HandoffCore
import NIOConcurrencyHelpers
import ServiceLifecycle

/// A request to stop every service and start them again in this process: for a new
/// identity (`IdentityRetirement`), whose files can only move once nothing writes them.
/// A stop (SIGTERM, SIGINT) wins over it: a daemon asked to stop never starts again.
final class DaemonRestart: Sendable {
    private let state = NIOLockedValueBox<(renewal: String?, group: ServiceGroup?, stopping: Bool)>((nil, nil, false))

    /// The folder the old identity's files go to, once a renewal was asked for.
    var renewal: String? { state.withLockedValue { $0.renewal } }
    var isStopping: Bool { state.withLockedValue { $0.stopping } }

    func serve(_ group: ServiceGroup) { state.withLockedValue { $0.group = group } }

    /// Before the next run: no renewal asked for, no group yet.
    func nextRun() { state.withLockedValue { $0.renewal = nil; $0.group = nil } }

    /// Stops the services gracefully (the control API last, so the request that asked is
    /// answered); `Daemon.run` then sets the identity aside and starts again. Returns the
    /// folder in effect (a second request while the first is under way gets the first's).
    func renewIdentity(keptAt folder: String) async throws(HandoffError) -> String {
        let (group, inEffect, stopping) = state.withLockedValue { s -> (ServiceGroup?, String, Bool) in
            if !s.stopping, s.renewal == nil { s.renewal = folder }
            return (s.group, s.renewal ?? folder, s.stopping)
        }
        guard !stopping else {
            throw HandoffError(.unavailable, code: "stopping", message: "handoffd is stopping; start it again, then ask for a new identity")
        }
        await group?.triggerGracefulShutdown()
        return inEffect
    }

    /// A stop signal: whatever was asked, this run is the last.
    func stop() async {
        let group = state.withLockedValue { s -> ServiceGroup? in
            s.stopping = true
            return s.group
        }
        await group?.triggerGracefulShutdown()
    }
}
