import Foundation
import GatehouseProtocol
import Synchronization

/// Why a bearer token was refused, with the exact answer of reference §2.5.
public enum BearerError: Error, Sendable, Equatable {
    /// No `Authorization: Bearer` header, or a malformed one: 401 `WWW-Authenticate: Bearer`.
    case missing
    /// A bad, expired or revoked token: 401 `Bearer error="invalid_token"`.
    case invalidToken
    /// The token lacks the scope: 403 `Bearer error="insufficient_scope", scope="..."`.
    case insufficientScope(Scope)

    /// The `WWW-Authenticate` value.
    public var challenge: String {
        switch self {
        case .missing: "Bearer"
        case .invalidToken: "Bearer error=\"invalid_token\""
        case .insufficientScope(let scope): "Bearer error=\"insufficient_scope\", scope=\"\(scope.normalized)\""
        }
    }

    /// 401 or 403.
    public var status: Int {
        if case .insufficientScope = self { return 403 }
        return 401
    }
}

/// Validates access tokens for resources: signature (ES256 with a known `kid` only), expiry, revocation, scope.
///
/// Verified tokens are cached by their text until they expire, so a token's signature is checked once per node;
/// revocation is checked on every use.
public final class TokenValidator: Sendable {
    private struct Cache {
        var claims: [String: AccessTokenClaims] = [:]
    }

    private let signer: TokenSigner
    let revocations: RevocationList
    private let cache = Mutex(Cache())
    /// The most tokens kept verified in memory.
    let cacheLimit = 100_000

    init(signer: TokenSigner, revocations: RevocationList) {
        self.signer = signer
        self.revocations = revocations
    }

    /// The claims of the token in an `Authorization` header, if it is valid now and grants `scope`.
    public func validate(authorization: String?, scope: Scope) async throws(BearerError) -> AccessTokenClaims {
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else { throw .missing }
        let token = authorization.dropFirst(7).trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, !token.contains(" ") else { throw .missing }
        let claims = try await claims(of: token)
        guard Scope(claims.scope).contains(scope) else { throw .insufficientScope(scope) }
        return claims
    }

    /// The claims of a valid (well signed, unexpired, unrevoked) token.
    public func claims(of token: String) async throws(BearerError) -> AccessTokenClaims {
        let now = Date()
        let cached = cache.withLock { $0.claims[token] }
        let claims: AccessTokenClaims
        if let cached {
            claims = cached
        } else {
            do {
                claims = try await signer.verify(token)
            } catch {
                throw .invalidToken
            }
            cache.withLock { cache in
                if cache.claims.count >= cacheLimit {
                    cache.claims = cache.claims.filter { $0.value.exp.value > now }
                    if cache.claims.count >= cacheLimit { cache.claims.removeAll(keepingCapacity: true) }
                }
                cache.claims[token] = claims
            }
        }
        guard claims.exp.value > now else {
            cache.withLock { _ = $0.claims.removeValue(forKey: token) }
            throw .invalidToken
        }
        guard !revocations.isRevoked(claims) else { throw .invalidToken }
        return claims
    }
}
