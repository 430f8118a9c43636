/// What one login module decided.
public enum LoginResult: Sendable, Equatable {
    /// The credentials are valid; the subject's roles and expiry are added to the chain's.
    case success(Subject)
    /// The credentials are wrong (or missing): the chain fails unless another module makes up for it.
    case failure(String)
    /// The module has nothing to say about these credentials (JAAS `login()` returning `false`).
    case ignore
}

/// A login module of a realm's chain (JAAS `LoginModule`). Implement it for custom credentials; modules may
/// suspend (a network call to check a token), they run off the I/O threads.
public protocol LoginModule: Sendable {
    /// Checks `credentials`; `scheme` is the realm's challenge scheme.
    func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult
}

/// How a module's result counts in the chain (JAAS `LoginModuleControlFlag`, as KAAZING Gateway's `login-module` element uses it).
public enum LoginModuleFlag: String, Sendable, Codable {
    /// Must succeed; the chain goes on either way.
    case required
    /// Must succeed; a failure stops the chain at once.
    case requisite
    /// Need not succeed; a success stops the chain (overall success if no required/requisite failed before).
    case sufficient
    /// Need not succeed; the chain goes on either way.
    case optional
}
