import Foundation
import GatehouseClient
import GatehouseProtocol

/// MobileFirst's access token: its value, scopes and expiry, and the `Authorization` field that carries it.
public final class AccessToken: NSObject, Sendable {
    /// The token itself.
    public let value: String
    /// The scope it was granted for.
    public let scope: String
    /// When it expires.
    public let expirationDate: Date

    init(_ token: GatehouseSDK.AccessToken) {
        value = token.value
        scope = token.scope
        expirationDate = token.expiresAt
    }

    /// The scope's elements.
    public var scopes: [String] { scope.split(separator: " ").map(String.init) }
    /// `Bearer <token>`, for an `Authorization` field.
    public var asAuthorizationRequestHeaderField: String { "Bearer \(value)" }
    /// Whether it has expired.
    public var isExpired: Bool { expirationDate <= Date() }
}

/// MobileFirst's `WLAuthorizationManager` over the Gatehouse SDK: tokens for scopes, login and logout. Callable from
/// any thread or isolation; completion handlers run on the main thread.
public final class WLAuthorizationManager: NSObject, Sendable {
    private static let shared = WLAuthorizationManager()

    /// The shared manager (`WLAuthorizationManager!`, as Swift sees MobileFirst's `+sharedInstance`).
    public static func sharedInstance() -> WLAuthorizationManager! { shared }

    private override init() {}

    /// A token for `scope` (`nil`: `RegisteredClient`), asking the registered challenge handlers as needed.
    public func obtainAccessToken(forScope scope: String!,
                                  withCompletionHandler completionHandler: (@MainActor @Sendable (AccessToken?, (any Error)?) -> Void)!) {
        let scope: String? = scope
        run(completionHandler) { client in AccessToken(try await client.obtainAccessToken(forScope: scope)) }
    }

    /// Logs in to `securityCheck` with `credentials` without a challenge first (pre-emptive login).
    public func login(_ securityCheck: String!, withCredentials credentials: [AnyHashable: Any]!,
                      withCompletionHandler completionHandler: (@MainActor @Sendable ((any Error)?) -> Void)!) {
        let answer = JSONBridging.object(credentials)
        let check = securityCheck ?? ""
        run({ (_: JSONObject?, error) in completionHandler?(error) }) { client in try await client.login(securityCheck: check, credentials: answer) }
    }

    /// Logs out of `securityCheck`: its state ends and the tokens it granted stop holding.
    public func logout(_ securityCheck: String!, withCompletionHandler completionHandler: (@MainActor @Sendable ((any Error)?) -> Void)!) {
        let check = securityCheck ?? ""
        run({ (_: Bool?, error) in completionHandler?(error) }) { client in
            try await client.logout(securityCheck: check)
            return true
        }
    }

    /// Forgets `token` (the next request asks for a new one).
    public func clearAccessToken(_ token: AccessToken!) {
        guard let token, let client = try? WLClient.shared.client() else { return }
        let stale = GatehouseSDK.AccessToken(value: token.value, scope: token.scope, expiresAt: token.expirationDate)
        Task { await client.clearAccessToken(stale) }
    }

    /// Runs `work` on the shared client; `completion` gets its value or its error, on the main thread.
    private func run<T: Sendable>(_ completion: (@MainActor @Sendable (T?, (any Error)?) -> Void)?,
                                  _ work: @escaping @Sendable (GatehouseClient) async throws -> T) {
        WLClient.shared.complete(completion) { client in (try await work(client), nil) }
    }
}
