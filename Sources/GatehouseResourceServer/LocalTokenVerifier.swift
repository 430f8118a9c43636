public import AsyncHTTPClient
public import Foundation
import GatehouseProtocol
import JWTKit
import NIOCore
import Synchronization

/// Verifies Gatehouse tokens locally against the server's JWKS: no call to Gatehouse per request.
///
/// The key set is fetched once and again when a token names an unknown `kid` (key rotation), at most once per
/// `minimumRefreshInterval`. Verified tokens are cached until they expire. A token stays valid until it expires:
/// use ``IntrospectionTokenVerifier`` where logout or revocation must take effect at once.
public final class LocalTokenVerifier: TokenVerifier {
    private struct State {
        var keys: JWTKeyCollection?
        var kids: Set<String> = []
        var lastFetch: ContinuousClock.Instant?
        /// At most 100,000 verified tokens, until they expire.
        var verified = ExpiringEntries<String, VerifiedToken, Date>(capacity: 100_000, overflow: .forgetAll)
    }

    private let jwksURL: String
    private let httpClient: HTTPClient
    private let minimumRefreshInterval: Duration
    private let state = Mutex(State())

    /// - Parameters:
    ///   - jwksURL: the server's key set, e.g. `http://gatehouse:8080/.well-known/jwks.json`.
    ///   - httpClient: the AsyncHTTPClient the key set is fetched with.
    ///   - minimumRefreshInterval: the shortest time between two fetches of the key set.
    public init(jwksURL: String, httpClient: HTTPClient = .shared, minimumRefreshInterval: Duration = .seconds(10)) {
        self.jwksURL = jwksURL
        self.httpClient = httpClient
        self.minimumRefreshInterval = minimumRefreshInterval
    }

    public func verify(_ token: String) async throws(TokenRejection) -> VerifiedToken {
        if let remembered = rememberedVerification(of: token) { return remembered.token }
        let now = Date()
        guard let kid = Self.kid(of: token) else { throw .invalidToken }
        let keys = try await keys(for: kid)
        let claims: AccessTokenClaims
        do {
            claims = try await keys.verify(token, as: AccessTokenJWT.self).claims
        } catch {
            throw .invalidToken
        }
        let verified = VerifiedToken(
            scope: Scope(claims.scope), clientID: claims.client_id, userID: claims.user, checks: claims.checks, expiresAt: claims.expiresAt,
            certificateThumbprint: claims.cnf?.x5tS256, acr: claims.acr,
            authTime: claims.auth_time.map { Date(timeIntervalSince1970: TimeInterval($0)) })
        _ = state.withLock { $0.verified.insert(verified, for: token, expires: verified.expiresAt, now: now) }
        guard verified.expiresAt > now else { throw .invalidToken }
        return verified
    }

    /// A token verified before and not expired: the cache's answer, which ``verify(_:)`` gives first too, until the
    /// token expires.
    public func rememberedVerification(of token: String) -> (token: VerifiedToken, until: Date)? {
        let now = Date()
        return state.withLock { $0.verified.value(for: token, now: now) }.map { ($0, $0.expiresAt) }
    }

    /// The key collection, fetched anew when `kid` is unknown and the last fetch is old enough.
    private func keys(for kid: String) async throws(TokenRejection) -> JWTKeyCollection {
        let (current, known, lastFetch) = state.withLock { ($0.keys, $0.kids.contains(kid), $0.lastFetch) }
        if let current, known { return current }
        if let lastFetch, ContinuousClock.now - lastFetch < minimumRefreshInterval {
            if let current { return current }
            throw .invalidToken
        }
        do {
            var request = HTTPClientRequest(url: jwksURL)
            request.method = .GET
            let response = try await httpClient.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1024 * 1024)
            guard response.status == .ok else { throw TokenRejection.invalidToken }
            let jwks = try JSONDecoder().decode(JWKS.self, from: Data(buffer: body))
            let keys = JWTKeyCollection()
            try await keys.add(jwks: jwks)
            let kids = Set(jwks.keys.compactMap { $0.keyIdentifier?.string })
            state.withLock { state in
                state.keys = keys
                state.kids = kids
                state.lastFetch = .now
            }
            guard kids.contains(kid) else { throw TokenRejection.invalidToken }
            return keys
        } catch {
            state.withLock { $0.lastFetch = .now }
            throw .invalidToken
        }
    }

    private static func kid(of token: String) -> String? {
        guard let header = token.split(separator: ".", omittingEmptySubsequences: false).first,
            let data = Base64URL.decode(header),
            let json = try? JSONDecoder().decode(JSON.self, from: data)
        else { return nil }
        return json["kid"]?.stringValue
    }
}

