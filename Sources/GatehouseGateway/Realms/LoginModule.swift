/// What one login module decided.
public enum LoginResult: Sendable, Equatable {
    /// The credentials are valid; the subject's roles and expiry are added to the chain's.
    case success(Subject)
    /// The credentials are wrong (or missing): the chain fails unless another module makes up for it.
    case failure(String)
    /// The module has nothing to say about these credentials (JAAS `login()` returning `false`).
    case ignore
    /// The module cannot decide now (too many password checks waiting, a service it asks is down): the request is
    /// answered `503` with `Retry-After`, and nothing is counted against the credentials.
    case unavailable(String)
    /// The client's address is refused for a while (too many failed passwords from it, or too many of its checks at
    /// once: `SourceThrottle`): answered `429` with `Retry-After` (`retryAfter` seconds), nothing counted against
    /// the credentials.
    case throttled(String, retryAfter: Int)
}

/// A login module of a realm's chain (JAAS `LoginModule`). Implement it for custom credentials; modules may
/// suspend (a network call to check a token), they run off the I/O threads.
public protocol LoginModule: Sendable {
    /// Checks `credentials`; `scheme` is the realm's challenge scheme.
    func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult

    /// The result of ``login(_:scheme:)`` when the module knows it without suspending (a verified password it
    /// remembers, a decision that needs no I/O), else `nil`. The gateway admits a request on its connection's
    /// event loop when every module of the chain answers here, and runs the chain on a task otherwise. The default
    /// is `nil`: every login runs on a task.
    func cachedLogin(_ credentials: Credentials, scheme: ChallengeScheme) -> LoginResult?
}

extension LoginModule {
    public func cachedLogin(_ credentials: Credentials, scheme: ChallengeScheme) -> LoginResult? { nil }
}

/// A login module that can tell how long a remembered answer holds, so that a connection may remember an admission
/// (``RememberedAdmission``): ``UsersLoginModule`` (a verified pair's lifetime) and ``GatehouseTokenLoginModule``
/// (its verifier's memory of a token).
protocol RememberingLoginModule: LoginModule {
    /// ``LoginModule/cachedLogin(_:scheme:)``, and until when a success stays true for the same credentials as long as
    /// no password fails meanwhile (``UnsettledAccounts/failures``); `nil` for results that depend on the
    /// credentials alone.
    func rememberedLogin(_ credentials: Credentials, scheme: ChallengeScheme) -> (result: LoginResult, until: ContinuousClock.Instant?)?
}

/// How a module's result counts in the chain (JAAS `LoginModuleControlFlag`, as KAAZING Gateway's `login-module` element uses it).
public enum LoginModuleFlag: String, Sendable, Codable, CaseIterable {
    /// Must succeed; the chain goes on either way.
    case required
    /// Must succeed; a failure stops the chain at once.
    case requisite
    /// Need not succeed; a success stops the chain (overall success if no required/requisite failed before).
    case sufficient
    /// Need not succeed; the chain goes on either way.
    case optional
}

extension LoginModuleFlag {
    /// Decodes a configuration's flag; one it does not know is refused naming the four.
    public init(from decoder: any Decoder) throws {
        self = try decoder.decodeCase(of: Self.self)
    }
}
