import Foundation
import GatehouseProtocol

extension AuthorizationManager {
    // MARK: Login and logout

    /// Logs in to `securityCheck` pre-emptively with `credentials` (`{"username":..,"password":..}`), without
    /// obtaining a token; returns the check's success data (for `UserLogin`, `{"user":{...}}`).
    ///
    /// Wrong credentials bring a challenge to the check's handler, as for any request. Called while a
    /// challenge of the same check is open (typically from its handler), the credentials answer that challenge
    /// and `login` returns that check's outcome — no "login already in process" error, no deadlock.
    public func login(securityCheck: String, credentials: JSONObject) async throws(GatehouseClientError) -> JSONObject {
        if let outcome = await registry.answerOpenChallenge(securityCheck, with: credentials) {
            return try outcome.get()
        }
        let origin = registry.nextSequence()
        let outcome = try await inTurn { () async -> Result<[String: JSON], GatehouseClientError> in
            do throws(GatehouseClientError) {
                return .success(try await self.withRegistration { (identity) async throws(GatehouseClientError) -> [String: JSON] in
                    try await self.preauthorizer.run(
                        identity: identity, scope: securityCheck, answers: [securityCheck: .object(credentials)], origin: origin)
                })
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()[securityCheck]?.objectValue ?? [:]
    }

    /// Logs out of `securityCheck` (`POST preauth/v1/logout`) and forgets every cached token. Logging out a
    /// client that never registered does nothing.
    public func logout(securityCheck: String) async throws(GatehouseClientError) {
        let outcome = try await inTurn { () async -> Result<Void, GatehouseClientError> in
            do throws(GatehouseClientError) {
                try await self.logoutInTurn(securityCheck: securityCheck)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }

    private func logoutInTurn(securityCheck: String) async throws(GatehouseClientError) {
        tokens.removeAll()
        guard let identity = try await registrar.existingIdentity() else { return }
        let response = try await api.postForm("preauth/v1/logout", [
            ("security_check", securityCheck), ("client_assertion_type", ClientAssertionClaims.assertionType),
            ("client_assertion", try api.assertion(for: identity, audience: nil, jti: nil)),
        ])
        guard (200..<300).contains(response.status) else {
            let error = RuntimeAPI.error(from: response)
            if error.isInvalidClientID {
                // The server forgot the client: nothing is logged in there any more.
                try await registrar.wipe()
                return
            }
            throw error
        }
    }

    /// Records the client's activity (`POST preauth/v1/heartbeat`), for checks with inactivity timeouts.
    public func heartbeat() async throws(GatehouseClientError) {
        guard let identity = try await registrar.existingIdentity() else { return }
        let response = try await api.postForm("preauth/v1/heartbeat", [
            ("client_assertion_type", ClientAssertionClaims.assertionType),
            ("client_assertion", try api.assertion(for: identity, audience: nil, jti: nil)),
        ])
        guard (200..<300).contains(response.status) else { throw RuntimeAPI.error(from: response) }
    }
}
