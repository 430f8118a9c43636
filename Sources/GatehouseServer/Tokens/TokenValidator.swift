import Foundation
import GatehouseHTTP
import GatehouseProtocol
import GatehouseResourceServer
import Synchronization

/// Validates access tokens for resources: signature (ES256 with a known `kid` only), expiry, revocation, scope.
///
/// Verified tokens are cached by their text until they expire, so a token's signature is checked once per node;
/// revocation is checked on every use.
public final class TokenValidator: Sendable {
    /// A verified token: its claims and its scope, parsed once.
    private struct Verified {
        let claims: AccessTokenClaims
        let scope: Scope
        /// The signing key, checked on every use: a retired key's tokens stop working at once.
        let kid: String?
    }

    /// A cache key: a token, or a whole `Authorization` value that carries one. Hashed over its last 32 bytes (a
    /// token ends with its signature: random to anyone without the key) and its length, compared whole: a token is
    /// some 600 bytes, and hashing all of them cost more than the rest of a protected request's check. Only
    /// verified tokens are ever inserted, so nobody can fill the table with colliding keys.
    struct CacheKey: Hashable {
        let text: String

        func hash(into hasher: inout Hasher) {
            let bytes = text.utf8
            hasher.combine(bytes.count)
            for byte in bytes.suffix(32) { hasher.combine(byte) }
        }

        static func == (lhs: CacheKey, rhs: CacheKey) -> Bool { lhs.text == rhs.text }
    }

    private let signer: TokenSigner
    let revocations: RevocationList
    /// At most 100,000 tokens kept verified in memory, until they expire; by their text, and by the `Authorization`
    /// values they came in (the usual bearer request is then found without parsing or copying its token).
    private let cache = Mutex(ExpiringEntries<CacheKey, Verified, Date>(capacity: 100_000, overflow: .forgetAll))

    init(signer: TokenSigner, revocations: RevocationList) {
        self.signer = signer
        self.revocations = revocations
    }

    /// The claims of the token in an `Authorization` header, if it is valid now and grants `scope`.
    public func validate(authorization: String?, scope: Scope) async throws(TokenRejection) -> AccessTokenClaims {
        guard let authorization else { throw .missing }
        let now = Date()
        let verified: Verified
        if let cached = cache.withLock({ $0.value(for: CacheKey(text: authorization), now: now) }) {
            verified = try usable(cached, now: now)
        } else {
            guard let token = Self.bearerToken(authorization) else { throw .missing }
            verified = try await self.verified(token)
            _ = cache.withLock { $0.insert(verified, for: CacheKey(text: authorization), expires: verified.claims.expiresAt, now: now) }
        }
        guard verified.scope.contains(scope) else { throw .insufficientScope(scope) }
        return verified.claims
    }

    /// The token of an `Authorization: Bearer <token>` value (scheme case-insensitive, blanks around the token
    /// allowed, none inside), read on its UTF-8 bytes: this runs for every protected request.
    static func bearerToken(_ authorization: String?) -> String? {
        guard let authorization, HeaderText.hasPrefixIgnoringCase(authorization, "bearer") else { return nil }
        let afterScheme = authorization.utf8.index(authorization.startIndex, offsetBy: 6)
        guard afterScheme < authorization.endIndex, HeaderText.isBlank(authorization.utf8[afterScheme]) else { return nil }
        var token = String(HeaderText.trimmed(authorization[afterScheme...]))
        // Scanned in memory: a token is some 600 bytes, and stepping a substring's UTF-8 view costs more.
        guard !token.isEmpty, !token.withUTF8({ $0.contains(where: HeaderText.isBlank) }) else { return nil }
        return token
    }

    /// The claims of a valid (well signed, unexpired, unrevoked) token.
    public func claims(of token: String) async throws(TokenRejection) -> AccessTokenClaims {
        try await verified(token).claims
    }

    private func verified(_ token: String) async throws(TokenRejection) -> Verified {
        let now = Date()
        let verified: Verified
        if let cached = cache.withLock({ $0.value(for: CacheKey(text: token), now: now) }) {
            verified = cached
        } else {
            do {
                let claims = try await signer.verify(token)
                verified = Verified(claims: claims, scope: Scope(claims.scope), kid: TokenSigner.kid(of: token))
            } catch {
                throw .invalidToken
            }
            _ = cache.withLock { $0.insert(verified, for: CacheKey(text: token), expires: verified.claims.expiresAt, now: now) }
        }
        return try usable(verified, now: now)
    }

    /// A verified token, checked again as on every use: unexpired, unrevoked, its signing key not retired.
    private func usable(_ verified: Verified, now: Date) throws(TokenRejection) -> Verified {
        guard !verified.claims.isExpired(at: now) else { throw .invalidToken }
        guard !revocations.isRevoked(verified.claims) else { throw .invalidToken }
        if let kid = verified.kid, signer.isRetired(kid) { throw .invalidToken }
        return verified
    }
}
