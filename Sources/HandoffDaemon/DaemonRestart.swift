import NIOConcurrencyHelpers
import ServiceLifecycle

/// A request to stop every service and start them again in this process: for a new
/// identity (`IdentityRetirement`), whose files can only move once nothing writes them.
final class DaemonRestart: Sendable {
    private let state = NIOLockedValueBox<(renewal: String?, group: ServiceGroup?)>((nil, nil))

    /// The folder the old identity's files go to, once a renewal was asked for.
    var renewal: String? { state.withLockedValue { $0.renewal } }

    func serve(_ group: ServiceGroup) { state.withLockedValue { $0.group = group } }

    /// Stops the services gracefully (the control API last, so the request that asked is
    /// answered); `Daemon.run` then sets the identity aside into `folder` and starts again.
    func renewIdentity(keptAt folder: String) async {
        let group = state.withLockedValue { s -> ServiceGroup? in
            if s.renewal == nil { s.renewal = folder }
            return s.group
        }
        await group?.triggerGracefulShutdown()
    }
}
