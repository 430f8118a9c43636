import Foundation
import GatehouseHTTP
public import GatehouseProtocol
public import GatehouseResourceServer
import Synchronization

/// Validates access tokens for resources: signature (ES256 with a known `kid` only), expiry, revocation, scope.
///
/// Verified tokens are cached by their text until they expire, so a token's signature is checked once per node;
/// revocation is checked on every use.
public final class TokenValidator: Sendable {
    /// A verified token: its claims and its scope, parsed once. A class: the cache hands out a reference, where a
    /// struct's every copy would retain and release each of the claims' strings (all requests with one token share
    /// them, so those counts would be contended between the event loops).
    private final class Verified: Sendable {
        let claims: AccessTokenClaims
        let scope: Scope
        /// The signing key, checked on every use: a retired key's tokens stop working at once.
        let kid: String?

        init(claims: AccessTokenClaims, scope: Scope, kid: String?) {
            self.claims = claims
            self.scope = scope
            self.kid = kid
        }
    }

    /// A cache key: a token, or a whole `Authorization` value that carries one. Hashed over its last 32 bytes (a
    /// token ends with its signature: random to anyone without the key) and its length, compared whole: a token is
    /// some 600 bytes, and hashing all of them cost more than the rest of a protected request's check. Only
    /// verified tokens are ever inserted, so nobody can fill the table with colliding keys.
    struct CacheKey: Hashable {
        let text: String

        func hash(into hasher: inout Hasher) {
            // In one piece from the string's memory (a native string's is contiguous): byte by byte through the
            // UTF-8 view cost a third of a cached token's whole check.
            let hashed: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
                hasher.combine(bytes.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.suffix(32))))
            }
            if hashed == nil {
                // The same hash from a copy of the last bytes.
                hasher.combine(text.utf8.count)
                Array(text.utf8.suffix(32)).withUnsafeBytes { hasher.combine(bytes: $0) }
            }
        }

        /// Byte for byte, as the hash reads them (`String`'s `==` would take canonically equivalent spellings for
        /// equal), and in time that depends on the lengths only: the key is a credential.
        static func == (lhs: CacheKey, rhs: CacheKey) -> Bool { ConstantTime.sameBytes(lhs.text, rhs.text) }
    }

    private let signer: TokenSigner
    let revocations: RevocationList
    /// At most 100,000 tokens kept verified in memory, until they expire: by the `Authorization` value they came in
    /// (``validate(authorization:scope:)``), or by their text (``claims(of:)``).
    private let cache = Mutex(ExpiringEntries<CacheKey, Verified, Date>(capacity: 100_000, overflow: .forgetAll))

    init(signer: TokenSigner, revocations: RevocationList) {
        self.signer = signer
        self.revocations = revocations
    }

    /// The claims of the token in an `Authorization` header, if it is valid now and grants `scope`.
    public func validate(authorization: String?, scope: Scope) async throws(TokenRejection) -> AccessTokenClaims {
        guard let authorization else { throw .missing }
        // Cached under the whole header: the usual bearer request is found without parsing or copying its token.
        let verified = try await verified(cachedAs: CacheKey(text: authorization)) { Self.bearerToken(authorization) }
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
        try await verified(cachedAs: CacheKey(text: token)) { token }.claims
    }

    /// ``claims(of:)`` from memory alone, for a request answered on the event loop: the claims of a valid token
    /// verified before, a rejection of one verified before and unusable now, or `nil` for a token not verified yet.
    func rememberedClaims(of token: String) -> Result<AccessTokenClaims, TokenRejection>? {
        remembered(CacheKey(text: token), now: Date()).map { $0.map(\.claims) }
    }

    /// ``validate(authorization:scope:)`` from memory alone, as ``rememberedClaims(of:)``.
    func rememberedValidation(authorization: String, scope: Scope) -> Result<AccessTokenClaims, TokenRejection>? {
        remembered(CacheKey(text: authorization), now: Date()).map { result in
            result.flatMap { $0.scope.contains(scope) ? .success($0.claims) : .failure(.insufficientScope(scope)) }
        }
    }

    /// The verified token under `key`, checked for use; `nil` when it is not in the cache.
    private func remembered(_ key: CacheKey, now: Date) -> Result<Verified, TokenRejection>? {
        guard let cached = cache.withLock({ $0.value(for: key, now: now) }) else { return nil }
        return Result { () throws(TokenRejection) in try usable(cached, now: now) }
    }

    /// The token that `key` stands for, from the cache or verified (`token` gives it, `nil`: none is there) and
    /// cached under `key`; checked for use either way.
    private func verified(cachedAs key: CacheKey, token: () -> String?) async throws(TokenRejection) -> Verified {
        let now = Date()
        if let remembered = remembered(key, now: now) { return try remembered.get() }
        guard let token = token() else { throw .missing }
        let verified: Verified
        do {
            let claims = try await signer.verify(token)
            verified = Verified(claims: claims, scope: Scope(claims.scope), kid: TokenSigner.kid(of: token))
        } catch {
            throw .invalidToken
        }
        _ = cache.withLock { $0.insert(verified, for: key, expires: verified.claims.expiresAt, now: now) }
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
