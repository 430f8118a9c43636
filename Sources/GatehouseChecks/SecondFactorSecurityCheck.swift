import Foundation
public import GatehouseProtocol

/// The data of a ``SecondFactorSecurityCheck``: which user its state is about.
public protocol SecondFactorCheckData: SecurityCheckData {
    /// The user the state is about: another active user starts afresh.
    var userID: String? { get set }
    /// The user's authentication (``AuthenticatedUser/authenticatedAt``) the state is about: a success holds for that
    /// login only — when the user logs in again, the second factor is asked again (a block and the attempts used
    /// stay). Before, a success outlived the login it was made on, and a password-only login after `max_age` gave a
    /// token with the second factor's `acr` and a fresh `auth_time` (issue 54, finding 7).
    var authenticatedAt: Int64? { get set }
    /// Why the last answer was refused, shown with the next challenge.
    var errorMsg: String? { get set }
}

/// A check that asks for something of the user another check made active — a second factor (``TOTP``'s code,
/// a ``Passkey``) — declared after that check with `requires: [UserLogin]` in the policy.
///
/// Provides `authorize` (a failure when no user is active; the state started afresh when the active user changed;
/// then the credentials-validation algorithm, the success carrying ``takeSuccessData(state:)``) and `introspect` (a
/// success holds for the user and the login it was made for only). Implement `validateCredentials` and `createChallenge`, reading
/// the user from `state.data.userID`.
public protocol SecondFactorSecurityCheck: CredentialsValidationSecurityCheck where CheckData: SecondFactorCheckData {
    /// What a success of this round carries beyond the scope (TOTP's new recovery codes), taken out of the state so
    /// that it is shown once; `nil` by default.
    func takeSuccessData(state: inout State) -> JSONObject?
}

extension SecondFactorSecurityCheck {
    public func takeSuccessData(state: inout State) -> JSONObject? { nil }

    /// The members every challenge of a second factor has: `{"errorMsg": null|"…", "remainingAttempts": N}` (no
    /// message in a fresh round of attempts).
    public func attemptsChallenge(state: State) -> JSONObject {
        ["errorMsg": JSON(state.usedAttempts == 0 ? nil : state.data.errorMsg), "remainingAttempts": JSON(state.remainingAttempts(validation))]
    }

    /// Ends an answer's verification: a success forgets the user's counted refusals, a refusal is counted (on
    /// `account` of the policy's account lockout, on every node) with the message the next challenge shows.
    func concluded(_ accepted: Bool, message: String? = nil, account: String, lockouts: any AccountLockouts, state: inout State,
                   now: Int64) async throws -> Bool {
        if accepted {
            try await lockouts.recordSuccess(account)
            state.data.errorMsg = nil
        } else {
            try await lockouts.recordFailure(account, now: now)
            state.data.errorMsg = message
        }
        return accepted
    }

    public func authorize(
        scope: Set<String>, credentials: JSONObject?, request: CheckRequest,
        state: inout State, client: inout ClientContext, response: inout AuthorizationResponse
    ) async throws {
        guard let active = client.activeUser else {
            response.addFailure(checkName: name, failure: [
                "failure": .string("No user is logged in: \(name) asks for a second factor of the user a login check made active (requires: [UserLogin] in the policy)"),
            ])
            return
        }
        let user = active.id
        if state.data.userID != user {
            state = makeState()
            state.data.userID = user
            state.data.authenticatedAt = active.authenticatedAt
        } else if state.data.authenticatedAt != active.authenticatedAt {
            // The same user, logged in again: what the earlier login's second factor granted ends, as a logout ends
            // it; a block and the attempts used stay (logging in again buys no fresh attempts).
            state = stateAfterLogout(state, client: client)
            state.data.userID = user
            state.data.authenticatedAt = active.authenticatedAt
        }
        var own = AuthorizationResponse()
        try await validateAndRespond(scope: scope, credentials: credentials, state: &state, client: &client, response: &own)
        let data = takeSuccessData(state: &state)
        if own.type == .success, let data {
            own.addSuccess(scope: scope, expiresAt: expiresAt(state: state), checkName: name, data: data)
        }
        response.merge(own)
    }

    public func introspect(scope: Set<String>, state: inout State, client: inout ClientContext, response: inout IntrospectionResponse) async throws {
        guard let user = client.activeUser, state.data.userID == user.id, state.data.authenticatedAt == user.authenticatedAt else { return }
        if state.state(validation, now: client.now) == State.success {
            response.addIntrospectionData(checkName: name, scope: scope, expiresAt: expiresAt(state: state), customData: nil)
        }
    }
}

extension UserFactorRecord {
    /// A check's factor data as stored: JSON with sorted keys.
    public static func encoded(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The check's data, decoded.
    public func decoded<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: Data(data.utf8))
    }
}
