/// Something about an activity or a request is wrong: which field or key, and what.
public struct ValidationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Dotted path of the offending field, e.g. `userInfo.position` or `activityType`.
    public var field: String
    public var problem: String

    public init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }

    public var description: String { "\(field): \(problem)" }
}
