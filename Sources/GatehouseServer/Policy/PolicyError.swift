/// A policy that cannot be used: names the file, the key and what is wrong.
public struct PolicyError: Error, Sendable, CustomStringConvertible, Equatable {
    public var file: String
    public var key: String
    public var problem: String

    public init(file: String, key: String, problem: String) {
        self.file = file
        self.key = key
        self.problem = problem
    }

    public var description: String { "\(file): \(key.isEmpty ? "(top level)" : key): \(problem)" }
}
