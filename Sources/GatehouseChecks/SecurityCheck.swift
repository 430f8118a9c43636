public import GatehouseProtocol

/// A security check: a stateful, per-client gate that answers each pre-authorization round with a success, a
/// challenge or a failure (MobileFirst's `SecurityCheck` interface).
///
/// The server keeps one ``State`` per client registration and check, loads it before a round and stores it after,
/// atomically with the other checks' states: a check's methods only change the values they are given.
///
/// Most checks build on ``CredentialsValidationSecurityCheck`` or ``UserAuthenticationSecurityCheck``, which
/// provide the whole algorithm and ask only for `validateCredentials` and `createChallenge`.
public protocol SecurityCheck: Sendable {
    /// The persisted per-client state of the check.
    associatedtype State: Codable & Sendable & Equatable

    /// The check's name, as the policy and the clients' challenge handlers know it.
    var name: String { get }

    /// Seconds without client activity after which the state is dropped; 0 for none.
    var inactivityTimeoutSec: Int { get }

    /// The state of a client the check has never seen.
    func makeState() -> State

    /// Runs one round for `scope` (the scope elements mapped to this check). `credentials` is the client's
    /// answer, or `nil` when the client sent none.
    func authorize(
        scope: Set<String>, credentials: JSONObject?, request: CheckRequest,
        state: inout State, client: inout ClientContext, response: inout AuthorizationResponse
    ) async throws

    /// Adds an entry to `response` if the state still grants `scope`; otherwise adds nothing.
    func introspect(scope: Set<String>, state: inout State, client: inout ClientContext, response: inout IntrospectionResponse) async throws

    /// An explicit logout from this check.
    func logout(state: inout State, client: inout ClientContext) async throws

    /// The state a logout leaves (after ``logout(state:client:)``): a fresh one by default. A check that counts
    /// failures keeps what the client must not undo by its own request — a block, the attempts used
    /// (``CredentialsValidationSecurityCheck`` does).
    func stateAfterLogout(_ state: State, client: ClientContext) -> State

    /// When the current state expires, epoch milliseconds; 0 when it already has.
    func expiresAt(state: State) -> Int64
}

extension SecurityCheck {
    public var inactivityTimeoutSec: Int { 0 }
    public func logout(state: inout State, client: inout ClientContext) async throws {}
    public func stateAfterLogout(_ state: State, client: ClientContext) -> State { makeState() }
}
