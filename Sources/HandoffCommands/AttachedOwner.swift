import HandoffClient
import HandoffCore
import HandoffWire

/// `become-current --attach`: the command is the activity's owning session. It answers
/// will-save with `--refresh-with`, reports what happens to the activity, and returns
/// when the activity ends.
struct AttachedOwner {
    let client: HandoffClient
    let session: EventSession
    let activityID: ActivityID
    let refreshCommand: String?
    let json: Bool

    func run() async throws {
        defer { session.close() }
        do {
            for try await event in session.events {
                switch event {
                case .willSave(let id, _) where id == activityID:
                    guard let refreshCommand else { continue }
                    try await refresh(with: refreshCommand)
                case .invalidated(let r, let reason) where r.activity.id == activityID:
                    note(event, "activity invalidated (\(reason))")
                    return
                case .expired(let r) where r.activity.id == activityID:
                    note(event, "activity expired")
                    return
                case .resigned(let r) where r.activity.id == activityID:
                    note(event, "activity is no longer current (still owned; Ctrl-C ends it)")
                default:
                    if json { Output.out(event.json.serialized()) }
                }
            }
        } catch {
            throw CommandFailure(description: "lost the connection to handoffd: \(error)")
        }
        throw CommandFailure(description: "handoffd closed the session (was it stopped?)")
    }

    private func note(_ event: ControlEvent, _ text: String) {
        if json { Output.out(event.json.serialized()) } else { Output.err(text) }
    }

    private func refresh(with command: String) async throws {
        let result: ShellCommand.Result
        do { result = try ShellCommand.run(command) } catch {
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
