import GatehouseProtocol
import GatehouseStore

extension ClientAssertionVerifier {
    /// Checks the proof of possession (``ProofOfPossession``) a request by `method` to `path` (`preauth/v1/preauthorize`)
    /// came with, for the client `record`: type `dpop+jwt`, signed by the client's *registered* key, for this method
    /// and endpoint, within ``ProofOfPossession/window`` of now, and never seen before (by any node sharing the store).
    /// Every refusal is `401` with `WWW-Authenticate: DPoP error="invalid_dpop_proof"` and says what was wrong.
    func verifyProof(_ compact: String?, of record: ClientRegistrationRecord, method: String, path: String, now: Int64) async throws {
        func refuse(_ message: String) -> AuthorizationError { .invalidProof(message) }
        guard let compact, !compact.isEmpty else {
            throw refuse("Application \(record.data.application.id) requires a proof of possession of the client's key "
                         + "(the \(ProofOfPossession.field) field) on every pre-authorization round.")
        }
        guard compact.utf8.count <= 16 * 1024 else { throw refuse("The proof is too long.") }
        let jws: JWS
        let claims: ProofOfPossession.Claims
        do {
            jws = try JWS(compact: compact)
            guard try jws.decodedHeader().typ == ProofOfPossession.type else { throw refuse("The proof's typ must be \(ProofOfPossession.type).") }
            claims = try jws.decodedPayload(as: ProofOfPossession.Claims.self)
        } catch let error as AuthorizationError {
            throw error
        } catch {
            throw refuse("The proof is not a JWS with jti, htm, htu and iat.")
        }
        do {
            try ClientSignature.verify(jws, with: record.publicKey,
                                       minimumBits: policies.current.policy.minimumClientKeyBits(for: record.data.application))
        } catch {
            throw refuse("The proof is not signed by the client's registered key.")
        }
        let target = claims.htu.split(separator: "?", maxSplits: 1).first.map(String.init) ?? claims.htu
        guard claims.htm == method, target == path || target.hasSuffix("/" + path) else {
            throw refuse("The proof is for another request (htm \(claims.htm.prefix(16)), htu \(claims.htu.prefix(128))).")
        }
        let seconds = now / 1000
        guard claims.iat >= seconds - ProofOfPossession.window, claims.iat <= seconds + ProofOfPossession.window else {
            throw refuse("The proof is outside its validity window (iat \(claims.iat), the server's time \(seconds)).")
        }
        // Once: this node's memory, then the store's (every node's), as for assertions.
        let digest = UsedAssertions.digest(of: "proof\u{0}" + record.clientID + "\u{0}" + claims.jti)
        let expiresAt = (claims.iat + ProofOfPossession.window) * 1000 + Self.skew
        guard used.consume(digest, expiresAt: expiresAt, now: now),
              try await store.consumeAssertion(digest: UsedAssertions.hex(digest), expiresAt: expiresAt, now: now)
        else { throw refuse("The proof was used already.") }
    }
}
