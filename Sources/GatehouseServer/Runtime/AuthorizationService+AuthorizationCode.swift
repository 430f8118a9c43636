import Crypto
import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore
import Logging

/// `az/v1/authorization`: a code when every check of the scope has succeeded.
extension AuthorizationService {
    /// `az/v1/authorization`: a code for the scope if every check it maps to is in success. Returns the URI to
    /// redirect to.
    ///
    /// - Parameter host: the host the request was sent to (a web client's redirect may name it).
    /// - Throws: ``AuthorizationError`` for a request refused.
    public func authorize(_ request: AuthorizationRequest, host: String?) async throws -> String {
        guard request.responseType == "code" else { throw AuthorizationError.unsupportedResponseType }
        guard let clientID = request.clientID, !clientID.isEmpty else { throw AuthorizationError.invalidRequest("client_id is required") }
        let scope = request.scope
        let redirectURI = request.redirectURI
        let granted: Grant?
        do {
            granted = try await withRegisteredClient(clientID) { record, application, snapshot -> Grant? in
                guard let redirectURI,
                    RedirectURI.isValid(redirectURI, clientID: clientID, platform: record.data.application.clientPlatform, host: host)
                else {
                    throw AuthorizationError.invalidRedirectURI
                }
                return try await self.grant(of: application, scope: scope, version: record.data.application.version, snapshot: &snapshot)
            }
        } catch let refusal as DeviceRefusal {
            throw AuthorizationError.deviceBlocked(refusal.message)
        }
        guard let redirectURI else { throw AuthorizationError.invalidRequest("redirect_uri is required") }   // checked above
        guard let grant = granted else {
            throw AuthorizationError.accessDenied(
                "The security checks of scope '\(scope.normalized.prefix(256))' have not all succeeded; pre-authorize first.")
        }
        let code = Self.randomToken()
        try await store.insertCode(
            AuthorizationCodeRecord(
                codeHash: Self.hash(code), clientID: clientID, scope: scope.normalized, redirectURI: redirectURI,
                expiresAt: EpochTime.nowMillis() + codeLifetime, tokenExpiresAt: grant.expiresAt, checks: grant.checks, userID: grant.user,
                acr: grant.acr, authTime: grant.authTime))
        return redirectURI + "?code=" + code
    }

    /// What the client's state grants for `scope` now, if every check it maps to is in success: the checks, the user,
    /// the `acr` and when the user authenticated; `nil` otherwise.
    func grant(of application: ApplicationPolicy, scope: Scope, version: String?, snapshot: inout ClientSnapshot) async throws -> Grant? {
        let checks = try checks(of: application, for: scope, version: version)
        var introspection = IntrospectionResponse()
        for (check, elements) in checks {
            try await snapshot.introspect(check, scope: elements, response: &introspection)
        }
        let now = snapshot.context.now
        var expiresAt = now + Int64(application.maxTokenExpiration) * 1000
        for (check, _) in checks {
            guard let entry = introspection.entries[check.name], entry.expiresAt > now else { return nil }
            expiresAt = min(expiresAt, entry.expiresAt)
        }
        let names = checks.map(\.check.name)
        let user = snapshot.context.activeUser
        return Grant(expiresAt: expiresAt, checks: names, user: user?.id, acr: application.authenticationContexts.acr(of: names),
                     authTime: user?.authenticatedAt)
    }

    /// What a code grants: the token's lifetime, the checks, the user, the `acr` and the user's authentication time.
    struct Grant: Sendable {
        var expiresAt: Int64
        var checks: [String]
        var user: String?
        var acr: String?
        var authTime: Int64?
    }
}
