import Foundation
import GatehouseProtocol

/// Step-up (RFC 9470) for resource requests: a resource that answers `401 Bearer
/// error="insufficient_user_authentication", acr_values="…", max_age=N, scope="…"` wants a token whose checks prove
/// more (a second factor) or whose user logged in more recently. The SDK then obtains a token of the scope the resource
/// names — the stronger checks' challenge handlers answer — and, when the refused token's login is older than
/// `max_age`, first logs out of the checks that granted it, so that the user logs in again. Once per request, as for
/// MobileFirst's own challenges (``ResourceRequest/maxAuthorizationRetries`` bounds it).
enum StepUp {
    /// The scope to obtain for `challenge`, after forgetting `refused` (and logging out of its checks when its login
    /// is too old).
    static func prepare(_ challenge: BearerChallenge, refused: AccessToken?, requestScope: String?, manager: AuthorizationManager,
                        now: Date = Date()) async throws(GatehouseClientError) -> String {
        let needed = Scope(challenge.scope ?? requestScope ?? refused?.scope).normalized
        guard let refused else { return needed }
        await manager.clearAccessToken(refused)
        if let maxAge = challenge.maxAge, let claims = refused.claims,
           claims.auth_time.map({ now.timeIntervalSince1970 - TimeInterval($0) > TimeInterval(maxAge) }) ?? true {
            // The login itself is too old: the checks that granted the token must be passed again.
            for check in claims.checks { try await manager.logout(securityCheck: check) }
        }
        return needed
    }
}
