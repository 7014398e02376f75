import HandoffClient
import HandoffControlAPI
import Logging

/// Guarding sleep for handoffd (Docs/LocalAPI.md §22): the agent holds logind's delay
/// lock; just before the machine sleeps it has handoffd hand the current offer to the
/// other workstations, then lets it sleep; after waking it has handoffd link again.
extension SessionAgent {
    /// How long handoffd may take before the machine sleeps anyway (logind's own limit,
    /// InhibitDelayMaxSec, is 5 s by default).
    static let sleepBudget: UInt64 = 3_000_000_000

    /// With each new event session: take the lock (once), and tell handoffd whether sleep
    /// is guarded.
    func guardSleep(session token: String) async {
        if sleepInhibitor == nil, sleepProblem == nil {
            do {
                let inhibitor = try await SleepInhibitor(loop: loop)
                try await inhibitor.take()
                sleepInhibitor = inhibitor
                sleepWatch = Task { [weak self] in
                    for await sleeping in inhibitor.events { await self?.sleepChanged(sleeping) }
                }
                logger.info("holding logind's delay lock: the current offer is handed on before sleep")
            } catch {
                sleepProblem = "\(error)"
                logger.info("sleep is not guarded", metadata: ["why": "\(error)"])
            }
        }
        do {
            if sleepInhibitor != nil {
                try await client.sleep(SleepRequest(phase: .guarded, session: token))
            } else {
                try await client.sleep(SleepRequest(phase: .unguarded, detail: "logind's delay lock could not be taken (\(sleepProblem ?? "unknown")): a headless machine, or no logind"))
            }
        } catch {
            logger.warning("could not tell handoffd about sleep", metadata: ["error": "\(error)"])
        }
    }

    func sleepChanged(_ sleeping: Bool) async {
        guard let inhibitor = sleepInhibitor else { return }
        if sleeping {
            let client = self.client
            let answer = await Self.within(Self.sleepBudget) { try await client.sleep(SleepRequest(phase: .prepare)) }
            switch answer {
            case .some(.success(let a)):
                logger.info("going to sleep", metadata: ["offered": "\(a.offered)", "handed to": "\(a.handedTo)"])
            case .some(.failure(let error)):
                logger.warning("handoffd could not hand the offer on before sleep", metadata: ["error": "\(error)"])
            case .none:
                logger.warning("handoffd took over \(Self.sleepBudget / 1_000_000_000) s to hand the offer on: sleeping without waiting")
            }
            await inhibitor.release()
        } else {
            do { try await inhibitor.take() } catch {
                logger.warning("could not take logind's delay lock again after waking", metadata: ["error": "\(error)"])
            }
            do { try await client.sleep(SleepRequest(phase: .resume)) } catch {
                logger.warning("could not tell handoffd the workstation woke", metadata: ["error": "\(error)"])
            }
        }
    }

    /// `body`'s result, or nil when it takes longer than `nanoseconds` (it is then cancelled).
    static func within<T: Sendable>(_ nanoseconds: UInt64, _ body: @escaping @Sendable () async throws -> T) async -> Result<T, Error>? {
        await withTaskGroup(of: Result<T, Error>?.self) { group in
            group.addTask {
                do { return .success(try await body()) } catch { return .failure(error) }
            }
            group.addTask {
                try? await LoopSleep.sleep(nanoseconds: nanoseconds)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
