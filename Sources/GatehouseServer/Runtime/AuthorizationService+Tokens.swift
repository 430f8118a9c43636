import Crypto
import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseResourceServer
import GatehouseStore
import Logging

/// `az/v1/token`: the authorization-code grant (client assertion) and client credentials (HTTP Basic, or a TLS
/// client certificate: RFC 8705).
extension AuthorizationService {
    /// `az/v1/token`: `authorization_code` with a client assertion, or `client_credentials` with HTTP Basic or the
    /// TLS client certificate `certificate` gives (asked only for a `client_id` without `Authorization`).
    public func token(form: [String: String], authorization: String?, address: String? = nil,
                      certificate: () async -> PresentedCertificate? = { nil }) async throws -> TokenResponse {
        switch form["grant_type"] {
        case "authorization_code":
            return try await exchangeCode(form: form, address: address)
        case "client_credentials":
            if authorization == nil, let id = form["client_id"], !id.isEmpty {
                return try await certificateCredentials(clientID: id, form: form, certificate: await certificate(), address: address)
            }
            return try await clientCredentials(form: form, authorization: authorization, address: address)
        case nil, "":
            throw GatehouseError(.badRequest, "invalid_request", "grant_type is required", style: .oauth)
        case let other?:
            throw GatehouseError(.badRequest, "unsupported_grant_type", "grant_type '\(other.prefix(64))' is not supported", style: .oauth)
        }
    }

    func exchangeCode(form: [String: String], address: String?) async throws -> TokenResponse {
        guard let code = form["code"], !code.isEmpty else {
            throw GatehouseError(.badRequest, "invalid_request", "code is required", style: .oauth)
        }
        let now = EpochTime.nowMillis()
        let client = try await assertions.verify(form: form, audience: .tokenEndpoint, jti: code, now: now, style: .oauth)
        func invalidGrant(_ message: String) -> GatehouseError { GatehouseError(.badRequest, "invalid_grant", message, style: .oauth) }
        guard let record = try await store.consumeCode(hash: Self.hash(code)) else {
            throw invalidGrant("The code is unknown, expired or already used.")
        }
        guard record.clientID == client.clientID else { throw invalidGrant("The code was issued to another client.") }
        guard record.expiresAt > now else { throw invalidGrant("The code has expired.") }
        // Required and equal (RFC 6749 §4.1.3): the code was issued for a redirect_uri.
        guard let given = form["redirect_uri"], given == record.redirectURI else {
            throw invalidGrant("redirect_uri must be the one the code was issued for.")
        }
        if let given = form["client_id"], !given.isEmpty, given != client.clientID {
            throw invalidGrant("client_id differs from the assertion's client.")
        }
        let expiresIn = Int((record.tokenExpiresAt - now) / 1000)
        guard expiresIn > 0 else { throw invalidGrant("The security checks' success has expired; pre-authorize again.") }
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


    func clientCredentials(form: [String: String], authorization: String?, address: String?) async throws -> TokenResponse {
        guard let client = try await confidentialClients.authenticate(authorization: authorization) else {
            throw GatehouseError.invalidConfidentialClient
        }
        return try issueToken(to: client, form: form, address: address)
    }

    /// Client credentials of a client authenticated by its TLS certificate (RFC 8705 §2): the token is bound to the
    /// certificate (`cnf.x5t#S256`, §3), usable only on connections that present it.
    func certificateCredentials(clientID: String, form: [String: String], certificate: PresentedCertificate?, address: String?) async throws
        -> TokenResponse
    {
        guard let certificate else {
            throw GatehouseError(.unauthorized, "invalid_client",
                                 "Authenticate with HTTP Basic, or with a TLS client certificate (client_id \(clientID.prefix(64)) sent none).",
                                 style: .oauth)
        }
        guard let client = try await confidentialClients.authenticate(clientID: clientID, certificate: certificate,
                                                                      authorities: clientCertificateAuthorities) else {
            throw GatehouseError.invalidConfidentialClient
        }
        return try issueToken(to: client, form: form, address: address, boundTo: certificate.thumbprint)
    }

    /// ``clientCredentials(form:authorization:address:)`` from memory alone, for a request answered on the event loop
    /// (``LoopAnswers``): the token when the caller's secret was verified before and it may have the scope; `nil`
    /// for anything else (a secret to verify or count, an error to answer), which the router's path does.
    func rememberedClientCredentials(form: [String: String], authorization: String, address: String?) -> TokenResponse? {
        guard form["grant_type"] == "client_credentials", let client = confidentialClients.rememberedClient(authorization: authorization),
              client.allows(Scope(form["scope"]))
        else { return nil }
        return try? issueToken(to: client, form: form, address: address)
    }

    /// A client-credentials token for an authenticated confidential client.
    private func issueToken(to client: ConfidentialClient, form: [String: String], address: String?, boundTo thumbprint: String? = nil) throws
        -> TokenResponse
    {
        let scope = Scope(form["scope"])
        guard client.allows(scope) else {
            throw GatehouseError(.badRequest, "invalid_scope", "Scope '\(scope.normalized.prefix(256))' is not allowed for client \(client.id).", style: .oauth)
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
