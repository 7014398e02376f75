import HandoffClient
import HandoffControlAPI
import HandoffCore
import NIOConcurrencyHelpers

/// Search from the shell (GNOME Shell's search provider, KRunner's runner): the live
/// offers, and the history's entries if they come in time.
extension SessionAgent {
    /// How long a search waits for the history before it answers with what is ready.
    static let historyDeadline: UInt64 = 80_000_000
    static let maximumHistorySearches = 4

    /// A query from GNOME Shell or KRunner: the live offers it finds at once, with the
    /// history's entries if they come within `historyDeadline`. Nothing when the history
    /// is off: that is the user's "do not remember".
    func answerSearch(_ query: SearchProviders.Query, _ invocation: DBusInvocation) async {
        let terms: [String]
        switch query {
        case .gnome(let t): terms = ShellSearch.terms(t)
        case .krunner(let q): terms = ShellSearch.terms([q])
        }
        var metas: [ShellSearch.Meta] = []
        if !terms.isEmpty {
            let now = SystemClock.now()
            let client = self.client
            let text = ShellSearch.historyQuery(terms) ?? ""
            let asking = presence.historySearches < Self.maximumHistorySearches
            if asking { presence.historySearches += 1 }
            let history = !asking ? nil : await Self.within(Self.historyDeadline) { [self] () -> Result<[HistoryEntry], HandoffClientError>? in
                // Counted until handoffd answers, not until the deadline: a history that
                // stalls holds at most `maximumHistorySearches` requests.
                defer { Task { await self.historySearchEnded() } }
                // The history's answer to nothing is everything: an empty query is asked
                // only to learn whether the history is on.
                do {
                    let entries = try await client.history(HistoryQuery(text: text.isEmpty ? nil : text, limit: text.isEmpty ? 1 : ShellSearch.maximumResults))
                    return .success(text.isEmpty ? [] : entries)
                } catch let e as HandoffClientError {
                    return .failure(e)
                } catch { return nil }
            }
            switch history {
            case .failure(.api(let e))?? where e.code == "no_history": presence.historyOff = true
            case .success??: presence.historyOff = false
            default: break  // not heard in time: as the last answer said
            }
            if presence.historyOff {
                metas = []
            } else {
                let live = ShellSearch.offers(presence.state, terms)
                metas = live.map { ShellSearch.meta($0, at: now) }
                if case .success(let entries)?? = history {
                    // The history's entry of what is offered live now adds nothing.
                    let liveIDs = Set(live.map(\.activity.id.rawValue))
                    metas += entries.filter { !liveIDs.contains($0.activityID) }.map { ShellSearch.meta($0, at: now) }
                }
            }
        }
        if let bus = presence.bus { let found = metas; await loop.run { bus.remember(found) } }
        switch query {
        case .gnome:
            await invocation.reply([.array("s", metas.map { .string($0.result.id) })])
        case .krunner:
            await invocation.reply([.array("(sssida{sv})", metas.enumerated().map { i, m in
                let live: Bool = if case .offer = m.result { true } else { false }
                return .tuple([.string(m.result.id), .string(m.name), .string(m.icon), .int32(live ? 100 : 30),
                               .double(max(0.1, (live ? 1.0 : 0.7) - Double(i) * 0.01)), .dictionary([DBusEntry("subtext", .string(m.description))])])
            })])
        }
    }

    func historySearchEnded() { presence.historySearches -= 1 }

    /// `work`'s answer if it comes within `nanoseconds`, else nil (it goes on, unheard).
    static func within<T: Sendable>(_ nanoseconds: UInt64, _ work: @escaping @Sendable () async -> T) async -> T? {
        let waiting = NIOLockedValueBox<CheckedContinuation<T?, Never>?>(nil)
        return await withCheckedContinuation { (c: CheckedContinuation<T?, Never>) in
            waiting.withLockedValue { $0 = c }
            Task {
                let value = await work()
                waiting.withLockedValue { $0?.resume(returning: value); $0 = nil }
            }
            Task {
                try? await LoopSleep.sleep(nanoseconds: nanoseconds)
                waiting.withLockedValue { $0?.resume(returning: nil); $0 = nil }
            }
        }
    }
}
