public import GatehouseProtocol

/// A credentials-validating check that authenticates a user, makes the user active and can remember them
/// (MobileFirst Developer Center, “Implementing the UserAuthenticationSecurityCheck”).
///
/// Implement ``createUser(state:client:)`` and ``rememberMeDurationSec`` beside `validateCredentials` and
/// `createChallenge`. The success carries
/// the user: `{"user":{"id":..,"displayName":..,"authenticatedAt":..,"authenticatedBy":..,"attributes":{..}}}`.
public protocol UserAuthenticationSecurityCheck: CredentialsValidationSecurityCheck {
    /// Seconds a user is remembered after a success with remember-me; 0 disables it (``UserLogin`` reads it from the
    /// policy's `rememberMeDurationSec`, 0 when absent).
    var rememberMeDurationSec: Int { get }

    /// The user the last valid credentials identified.
    func createUser(state: State, client: ClientContext) async throws -> AuthenticatedUser

    /// Whether to remember the user these credentials authenticated; `true` by default.
    func rememberCreatedUser(credentials: JSONObject) -> Bool
}

extension UserAuthenticationSecurityCheck {
    public func rememberCreatedUser(credentials: JSONObject) -> Bool { true }

    public func authorize(
        scope: Set<String>, credentials: JSONObject?, request: CheckRequest,
        state: inout State, client: inout ClientContext, response: inout AuthorizationResponse
    ) async throws {
        let now = client.now
        var user: AuthenticatedUser? = nil
        if credentials == nil, state.state(validation, now: now) == ExternalizableState.expired,
            let remembered = rememberedUser(client: client)
        {
            user = remembered
            state.setState(State.success, validation, now: now)
        }
        var own = AuthorizationResponse()
        try await validateAndRespond(scope: scope, credentials: credentials, state: &state, client: &client, response: &own)
        if own.type == .success {
            if let credentials {
                let created = try await createUser(state: state, client: client)
                user = created
                client.registration.registeredUser = created
                if rememberCreatedUser(credentials: credentials) {
                    rememberMe(client: &client)
                }
            }
            user = user ?? client.registration.registeredUser
            if let user {
                client.activeUser = user
                own.addSuccess(scope: scope, expiresAt: expiresAt(state: state), checkName: name, data: ["user": user.json])
            }
        }
        response.merge(own)
    }

    public func logout(state: inout State, client: inout ClientContext) async throws {
        if rememberMeDurationSec > 0 {
            client.registration.publicAttributes["rememberedAt"] = nil
        }
        if client.activeUser?.authenticatedBy == name { client.activeUser = nil }
    }

    private func rememberMe(client: inout ClientContext) {
        if rememberMeDurationSec > 0 {
            client.registration.publicAttributes["rememberedAt"] = .int(client.now)
        }
    }

    private func rememberedUser(client: ClientContext) -> AuthenticatedUser? {
        guard rememberMeDurationSec > 0,
            let rememberedAt = client.registration.publicAttributes["rememberedAt"]?.intValue,
            Int64(rememberedAt) + Int64(rememberMeDurationSec) * 1000 >= client.now
        else { return nil }
        return client.registration.registeredUser
    }
}
