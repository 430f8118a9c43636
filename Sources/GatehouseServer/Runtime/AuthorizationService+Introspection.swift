import Crypto
import Foundation
import GatehouseChecks
import GatehouseHTTP
public import GatehouseProtocol
import GatehouseResourceServer
import GatehouseStore
import Logging

/// Introspection (RFC 7662) and revocation (RFC 7009).
extension AuthorizationService {
    /// The scope a caller of the introspection endpoint needs.
    public static let introspectScope = "authorization.introspect"
    /// ``introspectScope`` parsed once.
    static let introspectScopeElements = Scope(introspectScope)

    /// `az/v1/introspection`: for a confidential client holding `authorization.introspect` (by its bearer token
    /// or, as RFC 7662 allows, by HTTP Basic), what a token grants; `{"active":false}` for anything not valid now.
    ///
    /// - Throws: ``AuthorizationError`` for a caller refused or a request without a token.
    public func introspect(_ request: TokenManagementRequest) async throws -> TokenIntrospection {
        if let authorization = request.authorization, HeaderText.hasPrefixIgnoringCase(authorization, "basic ") {
            guard let client = try await confidentialClients.authenticate(authorization: authorization) else {
                throw AuthorizationError.invalidConfidentialClient
            }
            guard client.allows(Self.introspectScopeElements) else {
                throw AuthorizationError.insufficientScope("Client \(client.id) may not introspect tokens.")
            }
        } else {
            do {
                _ = try await validator.validate(authorization: request.authorization, scope: Self.introspectScopeElements)
            } catch {
                throw AuthorizationError.callerTokenRefused(insufficientScope: error.status == 403, challenge: error.challenge ?? BearerAnswer.invalidToken,
                                                            message: "The caller needs a valid token with scope \(Self.introspectScope).")
            }
        }
        let token = request.token
        guard !token.isEmpty else { throw AuthorizationError.invalidRequest("token is required") }
        guard let claims = try? await validator.claims(of: token) else {
            metrics.tokenIntrospected(active: false)
            return .inactive
        }
        var answer = Self.introspection(of: claims)
        if claims.app != nil {
            let now = EpochTime.nowMillis()
            let client = try await introspectedClients.client(claims.client_id, now: now) {
                guard let stored = try await store.storedClient(clientID: claims.client_id) else { return nil }
                let record = stored.registration
                let device = record.data.device
                let snapshot = ClientSnapshot(registration: record, stored: stored.state, now: now, logger: logger)
                return IntrospectedClients.Client(
                    device: [
                        "id": .string(device.id), "hardware": JSON(device.hardware), "platform": JSON(device.platform),
                        "deviceDisplayName": JSON(device.deviceDisplayName), "status": .string((stored.device?.status ?? .active).rawValue),
                    ],
                    activeUser: snapshot.context.activeUser,
                    blocked: DeviceRefusal(stored.device, application: record.data.application.id) != nil)
            }
            // A token of a client whose device is blocked no longer holds (MobileFirst: access blocking applies to
            // protected resources at once, whatever tokens the app holds).
            if client?.blocked == true {
                metrics.tokenIntrospected(active: false)
                return .inactive
            }
            if let client { answer.describe(client, tokenUser: claims.user) }
        }
        metrics.tokenIntrospected(active: true)
        return answer
    }

    /// ``introspect(_:)`` from memory alone, for a request answered on the event loop
    /// (``LoopAnswers``): the answer when the caller's secret or token, the token and its client were all checked
    /// or read before (and the caller may introspect); `nil` when anything must be verified, read or refused, which
    /// ``introspect(_:)`` does. A token that is no longer valid is answered inactive here too.
    func rememberedIntrospection(_ request: TokenManagementRequest) -> TokenIntrospection? {
        guard let authorization = request.authorization else { return nil }
        let scope = Self.introspectScopeElements
        if HeaderText.hasPrefixIgnoringCase(authorization, "basic ") {
            guard let caller = confidentialClients.rememberedClient(authorization: authorization), caller.allows(scope) else { return nil }
        } else {
            guard case .success? = validator.rememberedValidation(authorization: authorization, scope: scope) else { return nil }
        }
        guard !request.token.isEmpty, let remembered = validator.rememberedClaims(of: request.token) else { return nil }
        guard case .success(let claims) = remembered else {
            metrics.tokenIntrospected(active: false)
            return .inactive
        }
        var answer = Self.introspection(of: claims)
        if claims.app != nil {
            guard let client = introspectedClients.remembered(claims.client_id, now: EpochTime.nowMillis()), !client.blocked else { return nil }
            answer.describe(client, tokenUser: claims.user)
        }
        metrics.tokenIntrospected(active: true)
        return answer
    }

    /// What the token itself tells: an active token's introspection without its client's device and user.
    private static func introspection(of claims: AccessTokenClaims) -> TokenIntrospection {
        var answer = TokenIntrospection(
            active: true, scope: claims.scope, clientID: claims.client_id, exp: claims.exp * 1000, iat: claims.iat_ms, sub: claims.sub,
            iss: claims.iss, jti: claims.jti, tokenType: "Bearer", username: claims.user ?? "anonymous",
            checks: Dictionary(uniqueKeysWithValues: claims.checks.map { ($0, JSON.object([:])) }))
        if let thumbprint = claims.cnf?.x5tS256 { answer.cnf = ["x5t#S256": .string(thumbprint)] }
        answer.acr = claims.acr
        answer.authTime = claims.auth_time
        if let app = claims.app {
            answer.application = ["id": .string(app.id), "clientPlatform": .string(app.clientPlatform), "version": JSON(app.version)]
        }
        return answer
    }

    /// `az/v1/revoke` (RFC 7009): a client revokes one of its own tokens. Authenticated by a client assertion
    /// (mobile clients) or HTTP Basic (confidential clients); unknown or foreign tokens are ignored.
    ///
    /// - Throws: ``AuthorizationError`` for a caller refused or a request without a token.
    public func revoke(_ request: TokenManagementRequest, address: String? = nil) async throws {
        let callerID: String
        if let client = try await confidentialClients.authenticate(authorization: request.authorization) {
            callerID = client.id
        } else if request.assertion.jws != nil {
            callerID = try await assertions.verify(request.assertion, audience: .revocation, jti: nil, now: EpochTime.nowMillis()).clientID
        } else {
            throw AuthorizationError.clientAuthenticationRequired("Authenticate with a client assertion or HTTP Basic.")
        }
        let token = request.token
        guard !token.isEmpty else { throw AuthorizationError.invalidRequest("token is required") }
        guard let claims = try? await validator.claims(of: token), claims.client_id == callerID else { return }
        try await validator.revocations.add([RevocationRecord(subject: .token(jti: claims.jti), revokedAt: EpochTime.nowMillis())])
        metrics.tokensRevoked(by: "client")
        audit.record("token.revoked", clientID: claims.client_id, application: claims.app?.id, user: claims.user, address: address,
                           actor: callerID, detail: "one token")
    }
}

extension TokenIntrospection {
    /// Adds the client's device (`mfp-device`) and, for a token of the client's active user, the user (`mfp-user`).
    fileprivate mutating func describe(_ client: IntrospectedClients.Client, tokenUser: String?) {
        device = client.device
        if let user = client.activeUser, user.id == tokenUser { self.user = user.json }
    }
}
