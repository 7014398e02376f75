import Foundation

/// A failure of a test's own making (a wait that ran out, a fixture that did not start),
/// said in words.
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// How often the waits below look again: often enough that a wait ends soon after its fact
/// holds, seldom enough that polling a daemon costs it nothing.
let pollInterval: Duration = .milliseconds(20)

/// Waits until `condition` holds; throws, naming `what` it waited for, after `timeout`
/// seconds. For waiting on real processes and their effects, never for asserting speed.
public func eventually(timeout: Double = 10, _ what: String, _ condition: () async throws -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + .milliseconds(Int64(timeout * 1000))
    while clock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: pollInterval)
    }
    // Once more at the deadline: a fact that came true during the last sleep counts.
    if try await condition() { return }
    throw TestFailure("timed out after \(timeout) s waiting for: \(what)")
}

/// The same, with the timeout first, as the workstation tests write it.
public func eventually(_ timeout: Double, _ what: String, _ condition: () async throws -> Bool) async throws {
    try await eventually(timeout: timeout, what, condition)
}

/// Watches `happened` for `seconds` and throws, naming what it watched, the first time it
/// holds: for "this must not happen", which a single look after a fixed sleep would miss
/// if it happened and was undone meanwhile. `seconds` is how long the thing would take to
/// happen were it going to (one announcement, one echo), said by the caller.
public func never(within seconds: Double, because what: String, _ happened: () async throws -> Bool) async throws {
    let clock = ContinuousClock()
    let start = clock.now
    let end = start + .milliseconds(Int64(seconds * 1000))
    repeat {
        if try await happened() {
            throw TestFailure("after \(String(format: "%.2f", (clock.now - start) / .seconds(1))) s of \(seconds) s watched, it happened: \(what)")
        }
        try await Task.sleep(for: pollInterval)
    } while clock.now < end
    if try await happened() { throw TestFailure("at the end of \(seconds) s watched, it happened: \(what)") }
}
