import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import GatehouseProtocol

/// Tokens and MobileFirst's 401/403 handling for requests that other networking code sends — a plain `URLSession`,
/// Alamofire's `RequestInterceptor` (`adapt` calls ``authorize(_:scope:)``, `retry` calls
/// ``shouldRetry(_:response:attempt:)``) — as ``ResourceRequest`` does for its own.
///
/// ```swift
/// let authorizer = URLRequestAuthorizer(client: client)
/// var attempt = 0
/// while true {
///     let request = try await authorizer.authorize(URLRequest(url: balanceURL))
///     let (data, response) = try await URLSession.shared.data(for: request)
///     guard try await authorizer.shouldRetry(request, response: response as! HTTPURLResponse, attempt: attempt) else { break }
///     attempt += 1
/// }
/// ```
public struct URLRequestAuthorizer: Sendable {
    let client: GatehouseClient

    public init(client: GatehouseClient) {
        self.client = client
    }

    /// `request` with `Authorization: Bearer <token>`: the token for `scope`, else for the scope this URL and method
    /// asked for before (learnt from its 403s); unchanged when no scope is known yet (the resource's answer says it).
    public func authorize(_ request: URLRequest, scope: String? = nil) async throws(GatehouseClientError) -> URLRequest {
        guard let wanted = scope ?? client.scopeCache.scope(for: Self.key(request)) else { return request }
        let token = try await client.authorizationManager.obtainAccessToken(forScope: wanted)
        var authorized = request
        authorized.setValue(token.authorizationHeaderValue, forHTTPHeaderField: "Authorization")
        return authorized
    }

    /// Reads a resource's answer to `request`: `true` when it refused the request's token or asked for a scope
    /// (`401`/`403` with `WWW-Authenticate: Bearer …`) and a token was obtained for what it asked — send the request
    /// again through ``authorize(_:scope:)``; `false` when the answer is the resource's own, or after
    /// ``ResourceRequest/maxAuthorizationRetries`` attempts (`attempt` counts from 0).
    public func shouldRetry(_ request: URLRequest, response: HTTPURLResponse, attempt: Int) async throws(GatehouseClientError) -> Bool {
        guard response.statusCode == 401 || response.statusCode == 403,
              let challenge = BearerChallenge(response.value(forHTTPHeaderField: "WWW-Authenticate")),
              attempt < ResourceRequest.maxAuthorizationRetries else { return false }
        let key = Self.key(request)
        let manager = client.authorizationManager
        let sent = request.value(forHTTPHeaderField: "Authorization")
        let known = client.scopeCache.scope(for: key)
        /// The cached token the request was sent with, among those of `scopes`.
        func sentToken(among scopes: [String?]) async -> AccessToken? {
            for scope in scopes {
                if let cached = await manager.cachedAccessToken(forScope: scope), cached.authorizationHeaderValue == sent { return cached }
            }
            return nil
        }
        let needed: String
        if response.statusCode == 401, challenge.asksForStepUp {
            // A stronger or more recent login (RFC 9470): a token of the scope named (StepUp forgets the refused one).
            needed = try await StepUp.prepare(challenge, refused: await sentToken(among: [known, challenge.scope]), requestScope: known, manager: manager)
        } else {
            needed = response.statusCode == 403 ? Scope(challenge.scope ?? known).normalized : known ?? Scope.registeredClient
            // The refused token is forgotten, so that the next one is new.
            if let refused = await sentToken(among: [needed]) { await manager.clearAccessToken(refused) }
        }
        client.scopeCache.set(needed, for: key)
        _ = try await manager.obtainAccessToken(forScope: needed)
        return true
    }

    static func key(_ request: URLRequest) -> String {
        ResourceScopeCache.key(url: request.url?.absoluteString ?? "", method: (request.httpMethod ?? "GET").uppercased())
    }
}
