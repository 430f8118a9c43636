/// A realm's chain of login modules with their flags, run with JAAS semantics (KAAZING Gateway documentation, “Configure a chain of login modules”).
public struct LoginChain: Sendable {
    /// One entry of the chain.
    public struct Entry: Sendable {
        public var module: any LoginModule
        public var flag: LoginModuleFlag
        public init(_ module: any LoginModule, flag: LoginModuleFlag) {
            self.module = module
            self.flag = flag
        }
    }

    /// The outcome of a chain.
    public enum Outcome: Sendable, Equatable {
        case authenticated(Subject)
        case failed(String)
    }

    public var entries: [Entry]

    public init(_ entries: [Entry]) { self.entries = entries }

    /// Runs the chain: a `required` or `requisite` failure fails it (a `requisite` one at once); a `sufficient`
    /// success ends it successfully unless a required module failed before; `optional` results only add roles.
    /// A module that ignores the credentials counts for nothing; at least one module must succeed.
    public func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> Outcome {
        var subject = Subject()
        var mandatoryFailure: String?
        var lastFailure: String?
        var anySuccess = false
        for entry in entries {
            switch await entry.module.login(credentials, scheme: scheme) {
            case .success(let found):
                subject.merge(found)
                anySuccess = true
                if entry.flag == .sufficient, mandatoryFailure == nil { return .authenticated(subject) }
            case .failure(let reason):
                lastFailure = reason
                switch entry.flag {
                case .requisite: return .failed(reason)
                case .required: if mandatoryFailure == nil { mandatoryFailure = reason }
                case .sufficient, .optional: break
                }
            case .ignore:
                break
            }
        }
        if let mandatoryFailure { return .failed(mandatoryFailure) }
        return anySuccess ? .authenticated(subject) : .failed(lastFailure ?? "no login module accepted the credentials")
    }
}
