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
        /// A module could not decide now (``LoginResult/unavailable(_:)``): the chain stops.
        case unavailable(String)
        /// A module refused the client's address for a while (``LoginResult/throttled(_:retryAfter:)``): the chain stops.
        case throttled(String, retryAfter: Int)
    }

    public var entries: [Entry]

    public init(_ entries: [Entry]) { self.entries = entries }

    /// Runs the chain: a `required` or `requisite` failure fails it (a `requisite` one at once); a `sufficient`
    /// success ends it successfully unless a required module failed before; `optional` results only add roles.
    /// A module that ignores the credentials counts for nothing; at least one module must succeed.
    public func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> Outcome {
        var run = Run()
        for entry in entries {
            if let outcome = run.step(await entry.module.login(credentials, scheme: scheme), flag: entry.flag) { return outcome }
        }
        return run.outcome
    }

    /// The chain's outcome when every module it runs answers ``LoginModule/cachedLogin(_:scheme:)`` (no suspension),
    /// else `nil` (run ``login(_:scheme:)``). The same JAAS semantics: the results are combined by the same `Run`.
    public func cachedLogin(_ credentials: Credentials, scheme: ChallengeScheme) -> Outcome? {
        rememberedLogin(credentials, scheme: scheme)?.outcome
    }

    /// ``cachedLogin(_:scheme:)``, and until when an `authenticated` outcome holds for the same credentials as long
    /// as no password fails meanwhile (``UnsettledAccounts/failures``): known when every module the chain ran can
    /// tell (a ``RememberingLoginModule``: the earliest end of their answers), `nil` otherwise.
    func rememberedLogin(_ credentials: Credentials, scheme: ChallengeScheme) -> (outcome: Outcome, until: ContinuousClock.Instant?)? {
        var run = Run()
        var known = true
        var until: ContinuousClock.Instant?
        for entry in entries {
            let result: LoginResult
            if let remembering = entry.module as? any RememberingLoginModule {
                guard let remembered = remembering.rememberedLogin(credentials, scheme: scheme) else { return nil }
                result = remembered.result
                if let end = remembered.until { until = min(until ?? end, end) }
            } else {
                guard let cached = entry.module.cachedLogin(credentials, scheme: scheme) else { return nil }
                result = cached
                known = false
            }
            if let outcome = run.step(result, flag: entry.flag) { return (outcome, known ? until : nil) }
        }
        return (run.outcome, known ? until : nil)
    }

    /// The state of one run of the chain: each module's result is added by ``step(_:flag:)``.
    private struct Run {
        var subject = Subject()
        var mandatoryFailure: String?
        var lastFailure: String?
        var anySuccess = false

        /// Adds a module's result; the chain's outcome when it ends here.
        mutating func step(_ result: LoginResult, flag: LoginModuleFlag) -> Outcome? {
            switch result {
            case .success(let found):
                subject.merge(found)
                anySuccess = true
                if flag == .sufficient, mandatoryFailure == nil { return .authenticated(subject) }
            case .failure(let reason):
                lastFailure = reason
                switch flag {
                case .requisite: return .failed(reason)
                case .required: if mandatoryFailure == nil { mandatoryFailure = reason }
                case .sufficient, .optional: break
                }
            case .ignore:
                break
            case .unavailable(let reason):
                return .unavailable(reason)
            case .throttled(let reason, let retryAfter):
                return .throttled(reason, retryAfter: retryAfter)
            }
            return nil
        }

        /// The outcome once every module has run.
        var outcome: Outcome {
            if let mandatoryFailure { return .failed(mandatoryFailure) }
            return anySuccess ? .authenticated(subject) : .failed(lastFailure ?? "no login module accepted the credentials")
        }
    }
}
