/// How a fuzz target reports a broken invariant. Under libFuzzer (no handler) it is a crash,
/// which keeps the input; the test suite's replay of the corpora sets a handler for its
/// task that records the failure against the input and goes on to the next.
public enum FuzzCheck {
    @TaskLocal public static var broken: (@Sendable (String) -> Void)?
}

func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    guard !condition() else { return }
    fuzzFailure(message())
}

func fuzzFailure(_ message: @autoclosure () -> String) {
    guard let broken = FuzzCheck.broken else { preconditionFailure(message()) }
    broken(message())
}
