import Foundation
import GatehouseProtocol

/// Access tokens, login and logout (MobileFirst's `WLAuthorizationManager`).
///
/// - Tokens are cached per normalised scope (`"b a"`, `"a b"` and `"RegisteredClient a b"` share one token) until
///   ``ClientConfiguration/refreshMargin`` before they expire; a cached token costs no HTTP at all.
/// - One authorization flow runs at a time. Callers that want the same scope share one flow (a `SharedFlow`);
///   other scopes wait their turn. A cancelled caller leaves at once with `cancelled`;
///   the flow is cancelled when its last caller leaves. `login` and `logout` take their turn in the same queue, so concurrent calls are served in
///   order, never refused as "already in process".
/// - When the server no longer knows the client (`INVALID_CLIENT_ID`), the flow wipes the registration,
///   registers again and retries — once.
public actor AuthorizationManager {
    let api: RuntimeAPI
    let registrar: Registrar
    let registry: ChallengeHandlerRegistry
    let preauthorizer: Preauthorizer

    /// The native clients' redirect URI; the authorization code comes back in its query.
    static let redirectURI = "https://\(ProtocolNames.nativeRedirectHost)"

    var tokens: [String: AccessToken] = [:] {
        didSet { if api.configuration.persistsTokens, tokens != oldValue { tokensChanged = true } }
    }
    /// Whether ``tokens`` changed since the key store last had them (``ClientConfiguration/persistsTokens``).
    private var tokensChanged = false
    /// Whether the tokens kept in the key store were read.
    private var loadedTokens = false
    private var flows: [String: (id: UInt64, flow: SharedFlow<AccessToken>)] = [:]
    private var nextFlow: UInt64 = 0
    private var busy = false
    private var turns: [(id: UInt64, continuation: CheckedContinuation<TurnWait, Never>)] = []
    private var nextTurn: UInt64 = 0

    init(api: RuntimeAPI, registrar: Registrar, registry: ChallengeHandlerRegistry) {
        self.api = api
        self.registrar = registrar
        self.registry = registry
        self.preauthorizer = Preauthorizer(api: api, registry: registry)
    }

    // MARK: Tokens

    /// An access token for `scope` (`nil`: `RegisteredClient`): the cached one while it is valid, else one from
    /// a new authorization flow — registration if needed, pre-authorization rounds (challenges go to the
    /// registered handlers), authorization code, token.
    ///
    /// - Throws: `cancelled` at once when the calling task is cancelled;
    ///   ``GatehouseClientError/challengeCancelled(securityCheck:)``,
    ///   ``GatehouseClientError/securityCheckFailed(failures:)``, ... when the flow fails.
    public func obtainAccessToken(forScope scope: String? = nil) async throws(GatehouseClientError) -> AccessToken {
        try await obtainAccessToken(forScope: scope, origin: registry.nextSequence())
    }

    func obtainAccessToken(forScope scope: String?, origin: UInt64) async throws(GatehouseClientError) -> AccessToken {
        let key = Scope(scope).normalized
        await loadTokens()
        if let token = validToken(key) { return token }
        guard !Task.isCancelled else { throw .cancelled(underlying: CancellationError()) }
        // Callers that want the same scope share one flow; each leaves at once when its task is cancelled, and
        // the flow is cancelled when the last one leaves.
        if let flow = flows[key]?.flow, let ticket = flow.join() { return try await flow.value(ticket).get() }
        nextFlow += 1
        let id = nextFlow
        let flow = SharedFlow { await self.tokenFlow(key: key, id: id, origin: origin) }
        flows[key] = (id, flow)
        guard let ticket = flow.join() else { throw .cancelled }
        return try await flow.value(ticket).get()
    }

    /// With ``ClientConfiguration/persistsTokens``, the tokens kept in the key store, read once (before the first
    /// flow): those that still hold are used as if obtained by this process.
    private func loadTokens() async {
        guard api.configuration.persistsTokens, !loadedTokens else { return }
        loadedTokens = true
        guard let kept = try? await registrar.storedTokens() else { return }
        for token in kept where !token.isExpired && tokens[token.scope] == nil { tokens[token.scope] = token }
        tokensChanged = false
    }

    /// With ``ClientConfiguration/persistsTokens``, writes the tokens to the key store when they changed (the unexpired
    /// ones). A store that cannot be written costs the next process its tokens, nothing else: it is logged.
    func saveTokens() async {
        guard api.configuration.persistsTokens, tokensChanged else { return }
        tokensChanged = false
        do {
            try await registrar.storeTokens(tokens.values.filter { !$0.isExpired }.sorted { $0.scope < $1.scope })
        } catch {
            api.configuration.logger.warning("Cannot keep the access tokens in the key store: \(error)")
        }
    }

    /// The cached, unexpired token for `scope`, without any flow.
    public func cachedAccessToken(forScope scope: String? = nil) -> AccessToken? {
        validToken(Scope(scope).normalized)
    }

    /// Forgets `token` (for instance after a resource refused it).
    public func clearAccessToken(_ token: AccessToken) async {
        await loadTokens()
        if tokens[token.scope] == token { tokens[token.scope] = nil }
        await saveTokens()
    }

    /// Forgets the token of `scope`.
    public func clearAccessToken(forScope scope: String?) async {
        await loadTokens()
        tokens[Scope(scope).normalized] = nil
        await saveTokens()
    }

    /// Forgets every token.
    public func clearAccessTokens() async {
        await loadTokens()
        tokens.removeAll()
        await saveTokens()
    }

    /// The cached token of `key` unless it expires within the refresh margin.
    private func validToken(_ key: String) -> AccessToken? {
        guard let token = tokens[key] else { return nil }
        if token.needsRefresh(margin: api.configuration.refreshMargin) {
            tokens[key] = nil
            return nil
        }
        return token
    }

    private func tokenFlow(key: String, id: UInt64, origin: UInt64) async -> Result<AccessToken, GatehouseClientError> {
        defer { if flows[key]?.id == id { flows[key] = nil } }
        do {
            return try await inTurn { await self.tokenFlowInTurn(key: key, origin: origin) }
        } catch {
            return .failure(error)
        }
    }

    private func tokenFlowInTurn(key: String, origin: UInt64) async -> Result<AccessToken, GatehouseClientError> {
        if let token = validToken(key) { return .success(token) }
        do throws(GatehouseClientError) {
            let token = try await withRegistration { (identity) async throws(GatehouseClientError) -> AccessToken in
                _ = try await self.preauthorizer.run(identity: identity, scope: key, origin: origin)
                let code = try await self.authorizationCode(identity: identity, scope: key)
                let token = try await self.exchange(code: code, identity: identity)
                self.tokens[token.scope] = token
                return token
            }
            api.observer.report(GatehouseEvent(.tokenObtained, scope: token.scope, expiresAt: token.expiresAt))
            return .success(token)
        } catch {
            api.observer.report(GatehouseEvent(.tokenFailed, scope: key, error: error))
            return .failure(error)
        }
    }

    /// `GET az/v1/authorization`: the code from the redirect's `Location` (the redirect is not followed).
    private func authorizationCode(identity: ClientIdentity, scope: String) async throws(GatehouseClientError) -> String {
        let response = try await api.send("GET", "az/v1/authorization", query: [
            ("response_type", "code"), ("client_id", identity.clientID), ("redirect_uri", Self.redirectURI), ("scope", scope),
        ])
        let fromLocation = response.header("Location").map(FormEncoding.queryItems(of:)) ?? [:]
        if let code = fromLocation["code"], !code.isEmpty, [200, 222].contains(response.status) || (300..<400).contains(response.status) {
            return code
        }
        if response.status == 200, let code = (try? JSONDecoder().decode(JSON.self, from: response.body))?["code"]?.stringValue {
            return code
        }
        if let message = fromLocation["errorMsg"] ?? fromLocation["error"] {
            throw .authorizationFailed("no authorization code for scope '\(scope)': \(message)")
        }
        let error = RuntimeAPI.error(from: response)
        if error.isInvalidClientID { throw error }
        throw .authorizationFailed("no authorization code for scope '\(scope)': \(error)")
    }

    /// `POST az/v1/token` with the code and a client assertion.
    private func exchange(code: String, identity: ClientIdentity) async throws(GatehouseClientError) -> AccessToken {
        let assertion = try api.assertion(for: identity, audience: api.tokenEndpoint, jti: code)
        let response = try await api.postForm("az/v1/token", [
            ("grant_type", "authorization_code"), ("code", code), ("client_id", identity.clientID), ("redirect_uri", Self.redirectURI),
            ("client_assertion_type", ClientAssertionClaims.assertionType), ("client_assertion", assertion),
        ])
        guard response.status == 200 else {
            throw .authorizationFailed("the token endpoint refused the code: \(RuntimeAPI.error(from: response))")
        }
        guard let token = try? JSONDecoder().decode(TokenResponse.self, from: response.body) else {
            throw .authorizationFailed("the token endpoint's answer is not a token")
        }
        return AccessToken(value: token.access_token, scope: token.scope, expiresAt: Date().addingTimeInterval(Double(token.expires_in)))
    }

    // MARK: Registration

    /// Runs `body` with the client's identity; after `INVALID_CLIENT_ID`, wipes the registration, registers
    /// again and runs `body` once more (never more).
    func withRegistration<T: Sendable>(_ body: (ClientIdentity) async throws(GatehouseClientError) -> T) async throws(GatehouseClientError) -> T {
        let identity = try await registrar.identity()
        do {
            return try await body(identity)
        } catch where error.isInvalidClientID {
            tokens.removeAll()
            try await registrar.wipe()
            return try await body(try await registrar.identity())
        }
    }

    // MARK: One flow at a time

    /// Runs `body` in a turn of its own, and after the turn the app's hooks it called (``DeferredHooks``).
    ///
    /// - Throws: `cancelled` when the task was cancelled before its turn came; `flowWaitTimedOut` when the flows
    ///   before it held the client longer than ``ClientConfiguration/flowWaitTimeout``.
    func inTurn<T: Sendable>(_ body: () async -> T) async throws(GatehouseClientError) -> T {
        try await takeTurn()
        let hooks = DeferredHooks()
        let result = await DeferredHooks.$current.withValue(hooks) { await body() }
        await saveTokens()
        endTurn()
        await hooks.run()
        return result
    }

    /// How a wait for a turn ended.
    enum TurnWait: Sendable {
        case granted, cancelled, timedOut
    }

    /// Waits for this flow's turn, at most ``ClientConfiguration/flowWaitTimeout``; a flow that throws has no turn
    /// to end.
    func takeTurn() async throws(GatehouseClientError) {
        guard !Task.isCancelled else { throw .cancelled(underlying: CancellationError()) }
        guard busy else {
            busy = true
            return
        }
        nextTurn += 1
        let id = nextTurn
        let limit = api.configuration.flowWaitTimeout
        let timer = Task { [weak self] in
            try? await Task.sleep(for: limit)
            guard !Task.isCancelled else { return }
            await self?.leaveQueue(id, because: .timedOut)
        }
        defer { timer.cancel() }
        let wait = await withTaskCancellationHandler {
            await withCheckedContinuation { turns.append((id, $0)) }
        } onCancel: {
            Task { await self.leaveQueue(id, because: .cancelled) }
        }
        switch wait {
        case .granted: return
        case .cancelled: throw .cancelled(underlying: CancellationError())
        case .timedOut:
            api.configuration.logger.warning("An authorization flow gave up waiting: the flows before it held the client longer than \(limit)")
            throw .flowWaitTimedOut(after: limit)
        }
    }

    /// A cancelled or timed-out flow leaves the queue without its turn.
    private func leaveQueue(_ id: UInt64, because wait: TurnWait) {
        guard let index = turns.firstIndex(where: { $0.id == id }) else { return }
        turns.remove(at: index).continuation.resume(returning: wait)
    }

    func endTurn() {
        if turns.isEmpty {
            busy = false
        } else {
            turns.removeFirst().continuation.resume(returning: .granted)
        }
    }
}
