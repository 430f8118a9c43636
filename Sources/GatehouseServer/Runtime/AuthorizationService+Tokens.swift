import Crypto
import Foundation
import GatehouseChecks
public import GatehouseProtocol
public import GatehouseResourceServer
import GatehouseStore
import Logging

/// `az/v1/token`: the authorization-code grant (client assertion) and client credentials (HTTP Basic, or a TLS
/// client certificate: RFC 8705).
extension AuthorizationService {
    /// `az/v1/token`: `authorization_code` with a client assertion, or `client_credentials` with HTTP Basic or the
    /// TLS client certificate `certificate` gives (asked only for ``ConfidentialClientAuthentication/certificate(clientID:)``).
    ///
    /// - Throws: ``AuthorizationError`` for a request refused.
    public func token(_ request: TokenRequest, address: String? = nil,
                      certificate: () async -> PresentedCertificate? = { nil }) async throws -> TokenResponse {
        switch request {
        case .authorizationCode(let grant):
            return try await exchangeCode(grant, address: address)
        case .clientCredentials(let grant):
            switch grant.authentication {
            case .basic(let authorization):
                return try await clientCredentials(scope: grant.scope, authorization: authorization, address: address)
            case .certificate(let clientID):
                return try await certificateCredentials(clientID: clientID, scope: grant.scope, certificate: await certificate(), address: address)
            }
        }
    }

    func exchangeCode(_ grant: TokenRequest.AuthorizationCodeGrant, address: String?) async throws -> TokenResponse {
        let code = grant.code
        let now = EpochTime.nowMillis()
        let client = try await assertions.verify(grant.assertion, audience: .tokenEndpoint, jti: code, now: now)
        func invalidGrant(_ message: String) -> AuthorizationError { .invalidGrant(message) }
        guard let record = try await store.consumeCode(hash: Self.hash(code)) else {
            throw invalidGrant("The code is unknown, expired or already used.")
        }
        guard record.clientID == client.clientID else { throw invalidGrant("The code was issued to another client.") }
        guard record.expiresAt > now else { throw invalidGrant("The code has expired.") }
        // Required and equal (RFC 6749 §4.1.3): the code was issued for a redirect_uri.
        guard let given = grant.redirectURI, given == record.redirectURI else {
            throw invalidGrant("redirect_uri must be the one the code was issued for.")
        }
        if let given = grant.clientID, !given.isEmpty, given != client.clientID {
            throw invalidGrant("client_id differs from the assertion's client.")
        }
        let expiresIn = Int((record.tokenExpiresAt - now) / 1000)
        guard expiresIn > 0 else { throw invalidGrant("The security checks' success has expired; pre-authorize again.") }
        try await refuseIfHeld(client, address: address)
        let app = client.data.application
        let claims = AccessTokenClaims(
            iss: issuer, sub: record.userID ?? client.clientID, exp: now / 1000 + Int64(expiresIn), iat: now / 1000, iat_ms: now,
            jti: Self.randomToken(bytes: 16),
            scope: record.scope, client_id: client.clientID,
            app: app,
            checks: record.checks, user: record.userID, acr: record.acr, auth_time: record.authTime.map { $0 / 1000 })
        let token = TokenResponse(accessToken: try await signer.sign(claims), expiresIn: expiresIn, scope: record.scope)
        metrics.tokenIssued(grant: "authorization_code")
        audit.record("token.issued", clientID: client.clientID, application: app.id, user: record.userID, address: address,
                           detail: "scope '\(record.scope)'")
        return token
    }

    /// Refuses a token to `client` when, now, an operator holds its device (`LOST`, `STOLEN`, `DISABLED`), blocks its
    /// application on it, or disables its application version (remote disable): read at the token endpoint, not
    /// only when the code was issued — a code obtained just before the hold was exchanged for a token after it
    /// (issue 54, finding 3). The code is used up either way.
    func refuseIfHeld(_ client: ClientRegistrationRecord, address: String?) async throws {
        guard let stored = try await store.storedClient(clientID: client.clientID) else {
            throw AuthorizationError.invalidGrant("The client is no longer registered.")
        }
        let data = stored.registration.data
        if let refusal = DeviceRefusal(stored.device, application: data.application.id) {
            audit.record("device.refused", clientID: client.clientID, address: address, detail: refusal.status.rawValue)
            throw AuthorizationError.deviceBlocked(refusal.message)
        }
        if let rule = try application(for: data).remoteDisable?.rule(for: data.application.version), rule.status == .disabled {
            throw AuthorizationError.accessDenied("This application version is disabled: \(rule.message.prefix(256))")
        }
    }

    func clientCredentials(scope: Scope, authorization: String?, address: String?) async throws -> TokenResponse {
        guard let client = try await confidentialClients.authenticate(authorization: authorization) else {
            throw AuthorizationError.invalidConfidentialClient
        }
        return try issueToken(to: client, scope: scope, address: address)
    }

    /// Client credentials of a client authenticated by its TLS certificate (RFC 8705 §2): the token is bound to the
    /// certificate (`cnf.x5t#S256`, §3), usable only on connections that present it.
    func certificateCredentials(clientID: String, scope: Scope, certificate: PresentedCertificate?, address: String?) async throws
        -> TokenResponse
    {
        guard let certificate else {
            throw AuthorizationError.clientAuthenticationRequired(
                "Authenticate with HTTP Basic, or with a TLS client certificate (client_id \(clientID.prefix(64)) sent none).")
        }
        guard let client = try await confidentialClients.authenticate(clientID: clientID, certificate: certificate,
                                                                      authorities: clientCertificateAuthorities) else {
            throw AuthorizationError.invalidConfidentialClient
        }
        return try issueToken(to: client, scope: scope, address: address, boundTo: certificate.thumbprint)
    }

    /// ``clientCredentials(scope:authorization:address:)`` from memory alone, for a request answered on the event loop
    /// (``LoopAnswers``): the token when the caller's secret was verified before and it may have the scope; `nil`
    /// for anything else (another grant, a secret to verify or count, an error to answer), which the router's path does.
    func rememberedClientCredentials(_ request: TokenRequest, address: String?) -> TokenResponse? {
        guard case .clientCredentials(let grant) = request, case .basic(let authorization?) = grant.authentication,
              let client = confidentialClients.rememberedClient(authorization: authorization), client.allows(grant.scope)
        else { return nil }
        return try? issueToken(to: client, scope: grant.scope, address: address)
    }

    /// A client-credentials token for an authenticated confidential client.
    private func issueToken(to client: ConfidentialClient, scope: Scope, address: String?, boundTo thumbprint: String? = nil) throws
        -> TokenResponse
    {
        guard client.allows(scope) else {
            throw AuthorizationError.scopeNotAllowed("Scope '\(scope.normalized.prefix(256))' is not allowed for client \(client.id).")
        }
        let now = EpochTime.nowMillis()
        let claims = AccessTokenClaims(
            iss: issuer, sub: client.id, exp: now / 1000 + Int64(confidentialTokenLifetime), iat: now / 1000, iat_ms: now,
            jti: Self.randomToken(bytes: 16),
            scope: scope.normalized, client_id: client.id, app: nil, checks: [], user: nil,
            cnf: thumbprint.map { .init(x5tS256: $0) })
        let token = TokenResponse(accessToken: try signer.signed(claims), expiresIn: confidentialTokenLifetime, scope: scope.normalized)
        metrics.tokenIssued(grant: "client_credentials")
        audit.record("token.issued", clientID: client.id, address: address, actor: client.id, detail: "scope '\(scope.normalized)'")
        return token
    }
}
