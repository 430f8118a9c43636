import GatehouseProtocol
import GatehouseStore

/// Checks a client assertion (as the MobileFirst SDKs sign it: `WLOAuthCertManager`, `ibmmfpf.js`): a JWS signed with the client's registered key, for the right
/// audience, within its 60-second window, used once.
///
/// Endpoint binding: MobileFirst clients send `aud` only to the token endpoint (`null` elsewhere, which is
/// accepted); an `aud` that is given must name the endpoint the assertion is presented to. Replay: outside the
/// token endpoint (where the code in `jti` is itself single-use) every assertion is accepted once by all the nodes
/// that share the store (``UsedAssertions`` in memory, then `UsedAssertionStore.consumeAssertion(digest:expiresAt:now:)`).
struct ClientAssertionVerifier: Sendable {
    /// The longest an assertion may be valid, ms.
    static let window: Int64 = 60_000
    /// Clock difference tolerated between client and server, ms.
    static let skew: Int64 = 10_000

    /// The endpoint an assertion is presented to: its `aud`, if the client gives one, must name it.
    enum Audience: String {
        case tokenEndpoint = "az/v1/token"
        case logout = "preauth/v1/logout"
        case heartbeat = "preauth/v1/heartbeat"
        case revocation = "az/v1/revoke"
        case registration = "registration/v1/self"
    }

    let store: any UsedAssertionStore & RegistrationStore
    let policies: PolicyInForce
    let used = UsedAssertions()

    /// The registration of the client that signed `assertion`.
    ///
    /// - Parameter jti: the value the assertion's `jti` must have (the authorization code), if any.
    /// - Throws: ``AuthorizationError`` for an assertion missing, malformed or refused.
    func verify(_ presented: ClientAssertion, audience: Audience, jti: String?, now: Int64) async throws -> ClientRegistrationRecord {
        func refuse(_ message: String) -> AuthorizationError { .invalidClientAssertion(message) }
        guard let assertion = presented.jws, !assertion.isEmpty else {
            throw AuthorizationError.invalidRequest("client_assertion is required")
        }
        guard presented.type == ClientAssertionClaims.assertionType else {
            throw AuthorizationError.invalidRequest("client_assertion_type must be \(ClientAssertionClaims.assertionType)")
        }
        let claims: ClientAssertionClaims
        let jws: JWS
        do {
            jws = try JWS(compact: assertion)
            claims = try jws.decodedPayload(as: ClientAssertionClaims.self)
        } catch {
            throw refuse("client_assertion is not a JWS")
        }
        guard let clientID = claims.sub, !clientID.isEmpty else { throw refuse("client_assertion has no sub") }
        guard let registration = try await store.registration(clientID: clientID) else { throw AuthorizationError.unknownClient(clientID) }
        do {
            try ClientSignature.verify(jws, with: registration.publicKey, minimumBits: policies.current.policy.minimumClientKeyBits(for: registration.data.application))
        } catch {
            throw refuse("client_assertion is not signed by the client's registered key")
        }
        guard let iat = claims.iat, let exp = claims.exp else { throw refuse("client_assertion needs iat and exp") }
        guard exp > iat, exp - iat <= Self.window, now >= iat - Self.skew, now <= exp + Self.skew else {
            throw refuse("client_assertion is outside its validity window")
        }
        if let aud = claims.aud {
            guard aud == audience.rawValue || aud.hasSuffix("/" + audience.rawValue) else {
                throw refuse("client_assertion aud must be this endpoint (\(audience.rawValue))")
            }
        } else if audience == .tokenEndpoint {
            throw refuse("client_assertion aud must be the token endpoint")
        }
        if let jti {
            guard let given = claims.jti, ConstantTime.equals(given, jti) else { throw refuse("client_assertion jti must be the code") }
        } else {
            // This node's memory first (no store call for a replay it saw), then the store's, which every node shares.
            let digest = UsedAssertions.digest(of: assertion)
            guard used.consume(digest, expiresAt: exp + Self.skew, now: now),
                  try await store.consumeAssertion(digest: UsedAssertions.hex(digest), expiresAt: exp + Self.skew, now: now)
            else { throw refuse("client_assertion was used already") }
        }
        return registration
    }
}
