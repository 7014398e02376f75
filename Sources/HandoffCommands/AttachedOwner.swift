import HandoffClient
import HandoffCore
import HandoffControlAPI

/// `become-current --attach`: the command is the activity's owning session. It answers
/// will-save with `--refresh-with`, reports what happens to the activity, and returns
/// when the activity ends.
struct AttachedOwner {
    let client: HandoffClient
    let session: EventSession
    let activityID: ActivityID
    let refreshCommand: String?
    /// `--stream-exec`: serves each requested stream; without it, requests are refused.
    let streamCommand: String?
    let json: Bool

    /// The caller owns `session` (`HandoffClient.withSession` closes it).
    func run() async throws {
        do {
            try await withThrowingDiscardingTaskGroup { streams in
                for try await event in session.events {
                    if case .streamRequested(let id, let streamID, let device) = event, id == activityID {
                        streams.addTask { await self.answer(streamID: streamID, device: device) }
                        continue
                    }
                    if try await handle(event) { return }
                }
                throw CommandFailure(description: "handoffd closed the session (was it stopped?)")
            }
        } catch let e as CommandFailure {
            throw e
        } catch {
            throw CommandFailure(description: "lost the connection to handoffd: \(error)")
        }
    }

    private func answer(streamID: String, device: PeerDevice) async {
        guard let streamCommand else {
            if !json { Output.err("handoffctl: refused a stream from \(device.name) (no --stream-exec)") }
            try? await client.refuseStream(streamID, reason: "the origin's owner serves no streams (no --stream-exec)")
            return
        }
        if !json { Output.err("handoffctl: stream requested by \(device.name)") }
        await StreamExec(client: client, command: streamCommand, json: json).serve(streamID: streamID, activityID: activityID, device: device)
    }

    /// True when the activity ended (the command is done).
    private func handle(_ event: ControlEvent) async throws -> Bool {
        do {
                switch event {
                case .willSave(let id, _) where id == activityID:
                    guard let refreshCommand else { return false }
                    try await refresh(with: refreshCommand)
                case .invalidated(let r, let reason) where r.activity.id == activityID:
                    note(event, "activity invalidated (\(reason))")
                    return true
                case .expired(let r) where r.activity.id == activityID:
                    note(event, "activity expired")
                    return true
                case .resigned(let r) where r.activity.id == activityID:
                    note(event, "activity is no longer current (still owned; Ctrl-C ends it)")
                default:
                    if json { Output.out(event.json.serialized()) }
                }
        }
        return false
    }

    private func note(_ event: ControlEvent, _ text: String) {
        if json { Output.out(event.json.serialized()) } else { Output.err(text) }
    }

    private func refresh(with command: String) async throws {
        let result: ShellCommand.Result
        // On the blocking pool: the command may take its time, and in place it would hold
        // one of the few threads every task of this process shares.
        do { result = try await BlockingFile.pool.runIfActive { try ShellCommand.run(command) } } catch {
            Output.err("handoffctl: --refresh-with could not run: \(error)")
            return
        }
        guard result.status == 0 else {
            Output.err("handoffctl: --refresh-with exited with status \(result.status); payload left as it was")
            return
        }
        var update = ActivityUpdate()
        do {
            guard case .object(let o) = try JSONValue(parsing: result.output) else {
                Output.err("handoffctl: --refresh-with must print a JSON object")
                return
            }
            update.userInfo = try TypedJSON.decode(dictionary: o, path: "userInfo")
        } catch {
            Output.err("handoffctl: --refresh-with printed bad JSON: \(error)")
            return
        }
        update.userInfoMode = .replace  // like updateUserActivityState: cleared, then re-added
        do {
            _ = try await client.update(activityID.rawValue, update)
        } catch {
            Output.err("handoffctl: refreshing the activity failed: \(error)")
        }
    }
}
