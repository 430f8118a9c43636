import Crypto
import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore

/// The token endpoint (OpenID Connect Core §3.1.3): codes for tokens (with PKCE), refresh tokens rotated, and a
/// refresh token used twice revoking its whole family (RFC 9700 §4.14.2).
extension OpenIDProvider {
    /// `POST /oidc/token`: the token answer (`access_token`, `id_token`, `refresh_token` for `offline_access`).
    ///
    /// - Throws: ``OpenIDError`` as RFC 6749 §5.2 names them.
    func token(form: [String: String], authorization: String?, address: String?) async throws -> JSONObject {
        let client = try await authenticate(form: form, authorization: authorization)
        switch form["grant_type"] {
        case "authorization_code"?: return try await exchangeCode(form: form, client: client, address: address)
        case "refresh_token"?: return try await refresh(form: form, client: client, address: address)
        case nil: throw OpenIDError.invalidRequest("grant_type is required.")
        case let other?: throw OpenIDError(status: 400, error: "unsupported_grant_type", description: "grant_type '\(other.prefix(64))' is not supported.")
        }
    }

    /// The client the request authenticates: HTTP Basic or `client_secret_post` for a client with a secret; a public
    /// client names itself with `client_id` (and proves the code with PKCE).
    private func authenticate(form: [String: String], authorization: String?) async throws -> OpenIDClient {
        let secrets = service.policies.current.openIDSecrets
        if let authorization, authorization.lowercased().hasPrefix("basic ") {
            guard let (id, secret) = ClientSecretBasic.parse(authorization), let client = clients[id], !client.isPublic,
                  try await secrets.authenticate(id: id, secret: secret) != nil
            else { throw OpenIDError.invalidClient(basic: true) }
            if let named = form["client_id"], named != id { throw OpenIDError.invalidRequest("client_id differs from the authenticated client.") }
            return client
        }
        guard let id = form["client_id"], let client = clients[id] else { throw OpenIDError.invalidClient(basic: false) }
        if let secret = form["client_secret"] {
            guard !client.isPublic, try await secrets.authenticate(id: id, secret: secret) != nil else { throw OpenIDError.invalidClient(basic: false) }
            return client
        }
        guard client.isPublic else { throw OpenIDError.invalidClient(basic: false) }
        return client
    }

    private func exchangeCode(form: [String: String], client: OpenIDClient, address: String?) async throws -> JSONObject {
        guard let code = form["code"], !code.isEmpty else { throw OpenIDError.invalidRequest("code is required.") }
        guard let record = try await store.consumeCode(hash: AuthorizationService.hash(code)), let extra = record.openID,
              extra["kind"]?.stringValue == "code"
        else {
            // Used before (RFC 6749 §4.1.2): the tokens its first use gave are revoked — the access token, and the
            // refresh token's family.
            if let used = try await store.consumeCode(hash: AuthorizationService.hash("used code\u{0}" + code)), let issued = used.openID {
                var revoked: [RevocationRecord] = []
                let now = EpochTime.nowMillis()
                if let jti = issued["jti"]?.stringValue { revoked.append(RevocationRecord(subject: .token(jti: jti), revokedAt: now)) }
                if let family = issued["family"]?.stringValue { revoked.append(RevocationRecord(subject: .token(jti: "rf:" + family), revokedAt: now)) }
                try await service.validator.revocations.add(revoked)
                service.audit.record("openid.code_reused", clientID: used.clientID, user: used.userID, address: address,
                                     detail: "code used twice; the tokens of its first use are revoked")
            }
            throw OpenIDError.invalidGrant("The code is unknown, expired or already used.")
        }
        guard record.clientID == client.id else { throw OpenIDError.invalidGrant("The code was issued to another client.") }
        guard record.expiresAt > EpochTime.nowMillis() else { throw OpenIDError.invalidGrant("The code has expired.") }
        guard form["redirect_uri"] == record.redirectURI else { throw OpenIDError.invalidGrant("redirect_uri must be the one the code was issued for.") }
        let verifier = form["code_verifier"]
        switch (extra["codeChallenge"]?.stringValue, verifier) {
        case (let challenge?, let verifier?):
            guard (43...128).contains(verifier.utf8.count),
                  ConstantTime.sameBytes(Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8)))), challenge)
            else { throw OpenIDError.invalidGrant("code_verifier does not match the code_challenge.") }
        case (_?, nil): throw OpenIDError.invalidGrant("code_verifier is required: the code was issued with a code_challenge.")
        case (nil, _?): throw OpenIDError.invalidGrant("code_verifier was sent, but the code was issued without a code_challenge.")
        case (nil, nil): break
        }
        let issued = try await issueTokens(record: record, client: client, nonce: extra["nonce"]?.stringValue, family: nil,
                                           grant: "authorization_code", address: address)
        // Kept while the tokens live: a second use of the code is told from a made-up one, and revokes them.
        var used = record
        used.codeHash = AuthorizationService.hash("used code\u{0}" + code)
        used.expiresAt = EpochTime.nowMillis() + Int64(max(client.accessTokenLifetime, issued.family == nil ? 0 : client.refreshTokenLifetime)) * 1000
        used.openID = ["kind": "used code", "jti": .string(issued.jti)]
        if let family = issued.family { used.openID?["family"] = .string(family) }
        try await store.insertCode(used)
        return issued.answer
    }

    private func refresh(form: [String: String], client: OpenIDClient, address: String?) async throws -> JSONObject {
        guard let token = form["refresh_token"], !token.isEmpty, token.utf8.count <= 512 else {
            throw OpenIDError.invalidRequest("refresh_token is required.")
        }
        let now = EpochTime.nowMillis()
        guard let record = try await store.consumeCode(hash: AuthorizationService.hash("refresh\u{0}" + token)) else {
            // Used before: the token was stolen or replayed; its family (every token rotated from the same code) ends.
            if let used = try await store.consumeCode(hash: AuthorizationService.hash("used\u{0}" + token)),
               let family = used.openID?["family"]?.stringValue {
                try await service.validator.revocations.add([RevocationRecord(subject: .token(jti: "rf:" + family), revokedAt: now)])
                service.audit.record("openid.refresh_reused", clientID: used.clientID, user: used.userID, address: address,
                                     detail: "refresh token used twice; its family is revoked")
            }
            throw OpenIDError.invalidGrant("The refresh token is unknown, expired or already used.")
        }
        guard let extra = record.openID, extra["kind"]?.stringValue == "refresh", let family = extra["family"]?.stringValue else {
            throw OpenIDError.invalidGrant("Not a refresh token.")
        }
        guard record.clientID == client.id else { throw OpenIDError.invalidGrant("The refresh token was issued to another client.") }
        guard record.expiresAt > now, !service.validator.revocations.isRevoked(jti: "rf:" + family) else {
            throw OpenIDError.invalidGrant("The refresh token has expired or was revoked.")
        }
        // Kept until the token would have expired: its second use is told from a made-up token.
        var tombstone = record
        tombstone.codeHash = AuthorizationService.hash("used\u{0}" + token)
        tombstone.openID = ["kind": "used", "family": .string(family)]
        try await store.insertCode(tombstone)
        var granted = record
        if let asked = form["scope"] {
            let scope = Scope(asked)
            guard Scope(record.scope).contains(scope) else { throw OpenIDError(status: 400, error: "invalid_scope", description: "The scope exceeds the one granted.") }
            granted.scope = scope.customElements.sorted().joined(separator: " ")
        }
        return try await issueTokens(record: granted, client: client, nonce: nil, family: family, grant: "refresh_token", address: address).answer
    }

    /// An access token, an id_token and, for `offline_access`, a refresh token (of `family`, or a new family); with the
    /// access token's `jti` and the refresh token's family.
    private func issueTokens(record: AuthorizationCodeRecord, client: OpenIDClient, nonce: String?, family: String?, grant: String,
                             address: String?) async throws -> (answer: JSONObject, jti: String, family: String?) {
        guard let username = record.userID, let user = try await store.user(named: username) else {
            throw OpenIDError.invalidGrant("The user is no longer known.")
        }
        let now = EpochTime.nowMillis()
        let scope = Scope(record.scope)
        let lifetime = client.accessTokenLifetime
        let jti = AuthorizationService.randomToken(bytes: 16)
        let claims = AccessTokenClaims(
            iss: issuer, sub: username, exp: now / 1000 + Int64(lifetime), iat: now / 1000, iat_ms: now, jti: jti,
            scope: record.scope, client_id: client.id, app: nil, checks: [], user: username, acr: record.acr, auth_time: record.authTime.map { $0 / 1000 })
        let accessToken = try await service.signer.sign(claims)
        var idToken = Self.userClaims(user, scope: scope.elements)
        idToken["iss"] = .string(issuer)
        idToken["aud"] = .string(client.id)
        idToken["azp"] = .string(client.id)
        idToken["iat"] = .int(now / 1000)
        idToken["exp"] = .int(now / 1000 + Int64(lifetime))
        if let authTime = record.authTime { idToken["auth_time"] = .int(authTime / 1000) }
        if let nonce { idToken["nonce"] = .string(nonce) }
        if let acr = record.acr { idToken["acr"] = .string(acr) }
        if case .array(let amr)? = record.openID?["amr"], !amr.isEmpty { idToken["amr"] = .array(amr) }
        // at_hash: the left half of the SHA-256 of the access token (both algorithms hash with SHA-256).
        idToken["at_hash"] = .string(Base64URL.encode(Data(SHA256.hash(data: Data(accessToken.utf8))).prefix(16)))
        if let session = record.openID?["session"] { idToken["sid"] = session }
        var answer: JSONObject = [
            "access_token": .string(accessToken), "token_type": "Bearer", "expires_in": .int(Int64(lifetime)), "scope": .string(record.scope),
            "id_token": .string(try await service.signer.signIDToken(.object(idToken), algorithm: client.signingAlgorithm)),
        ]
        var issuedFamily: String?
        if scope.elements.contains("offline_access") {
            let refreshToken = AuthorizationService.randomToken()
            let newFamily = family ?? AuthorizationService.randomToken(bytes: 16)
            issuedFamily = newFamily
            var stored = record
            stored.codeHash = AuthorizationService.hash("refresh\u{0}" + refreshToken)
            stored.redirectURI = record.redirectURI
            stored.expiresAt = family == nil ? now + Int64(client.refreshTokenLifetime) * 1000 : record.expiresAt
            stored.openID = ["kind": "refresh", "family": .string(newFamily),
                             "amr": record.openID?["amr"] ?? .array([]), "session": record.openID?["session"] ?? .null]
            try await store.insertCode(stored)
            answer["refresh_token"] = .string(refreshToken)
        }
        service.metrics.tokenIssued(grant: "openid_" + grant)
        service.audit.record("token.issued", clientID: client.id, application: client.id, user: username, address: address,
                             detail: "OpenID Connect \(grant), scope '\(record.scope)'")
        return (answer, jti, issuedFamily)
    }
}
