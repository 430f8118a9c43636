import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore

/// The UserInfo endpoint (OpenID Connect Core §5.3) and RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0).
extension OpenIDProvider {
    /// The claims about the user an access token of an OpenID client was issued for, as its scope allows.
    ///
    /// - Throws: ``OpenIDError/invalidToken(_:)`` for a token missing, not ours, expired, revoked or not an OpenID one.
    func userInfo(accessToken: String?) async throws -> JSONObject {
        guard let accessToken, !accessToken.isEmpty else {
            throw OpenIDError(status: 401, error: "invalid_token", description: "An access token is required.", challenge: "Bearer")
        }
        let claims: AccessTokenClaims
        do {
            claims = try await service.validator.claims(of: accessToken)
        } catch {
            throw OpenIDError.invalidToken("The access token is invalid, expired or revoked.")
        }
        let scope = Scope(claims.scope)
        guard scope.elements.contains("openid"), clients[claims.client_id] != nil, let username = claims.user else {
            throw OpenIDError(status: 403, error: "insufficient_scope", description: "The access token was not issued for openid.",
                              challenge: "Bearer error=\"insufficient_scope\"")
        }
        guard let user = try await store.user(named: username) else { throw OpenIDError.invalidToken("The user is no longer known.") }
        return Self.userClaims(user, scope: scope.elements)
    }

    /// What logout answers.
    enum Logout: Sendable, Equatable {
        /// Signed out: to the client's post-logout redirect URI, or (`nil`) the page that says so.
        case signedOut(redirect: String?)
        /// Nothing says who asks: the page asks the user to confirm (a form with this CSRF token).
        case confirm(csrf: String, parameters: [String: String])
        case error(status: Int, message: String)
    }

    /// RP-initiated logout: ends the browser's session (every client's) when an `id_token_hint` of ours names the
    /// client, or when the user confirms on the page (`confirmed` with the page's CSRF token); then redirects to a
    /// registered `post_logout_redirect_uri` of that client, with `state`.
    func logout(_ parameters: [String: String], session: String?, confirmedWith csrf: String?) async throws -> Logout {
        var client: OpenIDClient?
        var hinted = false
        if let hint = parameters["id_token_hint"], !hint.isEmpty {
            guard let claims = await service.signer.verifiedIDTokenClaims(hint), claims["iss"]?.stringValue == issuer,
                  let audience = claims["aud"]?.stringValue, let named = clients[audience]
            else { return .error(status: 400, message: "The application's id_token_hint is not a sign-in of this server.") }
            client = named
            hinted = true
        }
        if let id = parameters["client_id"] {
            guard let named = clients[id], client == nil || client!.id == id else {
                return .error(status: 400, message: "The application \"\(id.prefix(64))\" is not known here.")
            }
            client = named
        }
        var redirect: String?
        if let uri = parameters["post_logout_redirect_uri"] {
            guard let client, client.postLogoutRedirectURIs.contains(uri) else {
                return .error(status: 400, message: "The application asked to return to an address it has not registered.")
            }
            redirect = uri
        }
        let seal = try seal()
        if !hinted {
            let sessionKey = Self.isSession(session) ? session! : "none"
            guard let csrf, seal.isCSRF(csrf, session: sessionKey, purpose: "logout") else {
                return .confirm(csrf: seal.csrf(session: sessionKey, purpose: "logout"), parameters: parameters)
            }
        }
        if let session, Self.isSession(session) {
            do {
                try await service.withRegisteredClient(Self.registrationID(session: session)) { _, application, snapshot in
                    for check in application.checks.values { try await snapshot.logout(check) }
                }
            } catch AuthorizationError.unknownClient {
                // A session that never signed in: nothing to end.
            }
        }
        service.audit.record("openid.logout", clientID: client?.id, detail: hinted ? "id_token_hint" : "confirmed by the user")
        return .signedOut(redirect: redirect.map { uri in
            guard let state = parameters["state"] else { return uri }
            return OpenIDAuthorizationRequest.redirect(uri, [("state", state)], issuer: issuer)
        })
    }
}
