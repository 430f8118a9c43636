import Crypto
import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore
import Logging

/// The authorization server's logic, apart from HTTP: registration, pre-authorization rounds, codes, tokens,
/// logout and heartbeat. The routes translate HTTP to these calls and back.
public struct AuthorizationService: Sendable {
    public let policy: SecurityPolicy
    public let store: any GatehouseStore
    public let signer: TokenSigner
    /// The `iss` of issued tokens, equal to the RFC 8414 issuer.
    public let issuerName: IssuerName
    var issuer: String { issuerName.current }
    let logger: Logger
    let locks = KeyedLock()
    let assertions: ClientAssertionVerifier
    /// Validates access tokens for resources and introspection.
    public let validator: TokenValidator
    let confidentialClients: ConfidentialClients
    /// The audit log (in the store).
    public let audit: AuditLog
    /// The Prometheus metrics (`/metrics`).
    public let metrics: GatehouseMetrics
    /// Rounds tried again after losing a race for the client's state before answering 409.
    let maxRoundRetries = 8
    /// How long an authorization code can be exchanged, ms.
    let codeLifetime: Int64 = 120_000

    init(policy: SecurityPolicy, store: any GatehouseStore, signer: TokenSigner, revocations: RevocationList, issuer: IssuerName,
         passwords: PasswordVerifier, audit: AuditLog, metrics: GatehouseMetrics = GatehouseMetrics(), logger: Logger) {
        self.policy = policy
        self.audit = audit
        self.metrics = metrics
        self.store = store
        self.signer = signer
        self.issuerName = issuer
        self.logger = logger
        self.assertions = ClientAssertionVerifier(store: store, policy: policy)
        self.validator = TokenValidator(signer: signer, revocations: revocations)
        self.confidentialClients = ConfidentialClients(policy.confidentialClients, passwords: passwords)
    }

    // MARK: Registration

    /// Registers a client from its self-signed registration data; returns the new client id.
    ///
    /// - Parameters:
    ///   - origin: the request's `Origin` (web pages); a page of another origin than `host` must be one the
    ///     application allows.
    ///   - host: the request's authority.
    public func register(_ request: RegistrationRequest, origin: String? = nil, host: String? = nil, address: String? = nil) async throws -> String {
        let jws = request.signedRegistrationData
        let jwk: RSAPublicJWK
        let data: RegistrationData
        do {
            guard let key = try jws.decodedHeader().jwk else {
                throw GatehouseError.invalidRequest("signedRegistrationData.header must carry the client's public key (jwk)")
            }
            jwk = key.withoutKid
            data = try jws.decodedPayload(as: RegistrationData.self)
        } catch let error as JWSError {
            throw GatehouseError.invalidRequest("signedRegistrationData: \(Self.describe(error))")
        }
        let application = try application(for: data)
        do {
            try ClientSignature.verify(jws, with: jwk, minimumBits: application.minimumClientKeyBits)
        } catch {
            throw GatehouseError.invalidRequest("signedRegistrationData: \(Self.describe(error, minimumBits: application.minimumClientKeyBits))")
        }
        guard CORS.isAllowed(origin: origin, host: host, application: application) else {
            throw GatehouseError(.forbidden, "ORIGIN_NOT_ALLOWED",
                                 "Web pages of origin '\((origin ?? "").prefix(128))' may not register for application \(application.id).")
        }
        let now = Clock.nowMillis()
        let clientID = UUID().uuidString.lowercased()
        try await store.createRegistration(
            ClientRegistrationRecord(clientID: clientID, data: data, publicKey: jwk, createdAt: now, updatedAt: now))
        logger.info("Registered client \(clientID) of \(data.application.id) (\(data.application.clientPlatform) \(data.application.version ?? "any version"))")
        metrics.registration()
        await audit.record("registration", clientID: clientID, application: data.application.id, address: address,
                           detail: "device \(data.device.id.prefix(128))")
        return clientID
    }

    /// Updates a registration; the data must be signed with the key the client registered.
    public func updateRegistration(clientID: String, _ request: RegistrationRequest) async throws {
        guard var record = try await store.registration(clientID: clientID) else { throw GatehouseError.invalidClientID(clientID) }
        let data: RegistrationData
        let minimumBits = policy.minimumClientKeyBits(for: record.data.application)
        do {
            try ClientSignature.verify(request.signedRegistrationData, with: record.publicKey, minimumBits: minimumBits)
            data = try request.signedRegistrationData.decodedPayload(as: RegistrationData.self)
        } catch {
            throw GatehouseError.invalidRequest("signedRegistrationData: \(Self.describe(error, minimumBits: minimumBits))")
        }
        _ = try application(for: data)
        record.data = data
        record.updatedAt = Clock.nowMillis()
        try await store.updateRegistration(record)
    }

    /// The registration of the client whose assertion `form` carries, which must be `clientID`.
    public func registration(clientID: String, form: [String: String]) async throws -> ClientRegistrationRecord {
        let record = try await assertions.verify(form: form, audience: .registration, jti: nil, now: Clock.nowMillis(), style: .mobileFirst)
        guard record.clientID == clientID else {
            throw GatehouseError(.forbidden, "FORBIDDEN", "The assertion was signed by another client.")
        }
        return record
    }

    private func application(for data: RegistrationData) throws -> ApplicationPolicy {
        guard let application = policy.application(for: data.application) else {
            throw GatehouseError(
                .forbidden, "APPLICATION_NOT_REGISTERED",
                "Application '\(data.application.id.prefix(128))' for platform '\(data.application.clientPlatform.prefix(32))' version '\((data.application.version ?? "none").prefix(32))' is not registered in the server's policy.")
        }
        return application
    }

    private func registeredClient(_ clientID: String) async throws -> (ClientRegistrationRecord, ApplicationPolicy) {
        guard let record = try await store.registration(clientID: clientID) else { throw GatehouseError.invalidClientID(clientID) }
        return (record, try application(for: record.data))
    }

    // MARK: Pre-authorization

    /// One pre-authorization round: runs every check the scope maps to with the client's answers.
    public func preauthorize(_ request: PreauthorizeRequest, checkRequest: CheckRequest) async throws -> PreauthorizeOutcome {
        let (record, application) = try await registeredClient(request.client_id)
        let checks = try checks(of: application, for: Scope(request.scope))
        var answers: [String: JSONObject?] = [:]
        for (name, answer) in request.challengeResponse ?? [:] {
            switch answer {
            case .object(let object): answers[name] = object
            case .null: answers[name] = .some(nil)
            default: throw GatehouseError.invalidRequest("challengeResponse.\(name.prefix(64)) must be a JSON object")
            }
        }
        let (response, outcomes, counted) = try await withClient(record) { snapshot in
            var response = AuthorizationResponse()
            var outcomes: [AuditEvent] = []
            var counted: [(check: String, type: AuthorizationResponse.ResponseType?, answered: Bool)] = []
            for (check, elements) in checks {
                var own = AuthorizationResponse()
                let credentials = answers[check.name] ?? nil
                try await snapshot.authorize(check, scope: elements, credentials: credentials, request: checkRequest, response: &own)
                response.merge(own)
                counted.append((check.name, own.type, credentials != nil))
                // An answer was judged: a success, a wrong answer (challenged again) or a block (refused).
                if credentials != nil, let type = own.type {
                    let event = switch type {
                    case .success: "check.success"
                    case .challenge: "check.failure"
                    case .failure: "check.blocked"
                    }
                    outcomes.append(AuditEvent(
                        time: snapshot.context.now, event: event, clientID: record.clientID, application: record.data.application.id,
                        user: snapshot.context.activeUser?.id, check: check.name, address: checkRequest.remoteAddress))
                }
            }
            return (response, outcomes, counted)
        }
        for (check, type, answered) in counted {
            let outcome: GatehouseMetrics.CheckOutcome? = switch type {
            case .success?: .success
            case .challenge?: .challenge
            case .failure?: .block
            case nil: nil
            }
            metrics.check(check, outcome: outcome, answered: answered)
        }
        await audit.record(outcomes)
        return PreauthorizeOutcome(response: response, serverTime: Clock.nowMillis())
    }

    private func checks(of application: ApplicationPolicy, for scope: Scope) throws -> [(check: any SecurityCheck, scope: Set<String>)] {
        do {
            return try application.checks(for: scope)
        } catch {
            throw GatehouseError(
                .badRequest, "INVALID_SCOPE",
                "Scope element '\(error.element.prefix(64))' maps to no security check of application \(application.id).")
        }
    }

    /// Runs `body` on the client's state under the client's lock, and stores its changes atomically; a round that
    /// lost a race against another node is run again on fresh state.
    func withClient<T: Sendable>(_ record: ClientRegistrationRecord, _ body: (inout ClientSnapshot) async throws -> T) async throws -> T {
        try await locks.withLock(record.clientID) {
            for _ in 0..<maxRoundRetries {
                let stored = try await store.clientState(clientID: record.clientID)
                var snapshot = ClientSnapshot(registration: record, stored: stored, now: Clock.nowMillis(), logger: logger)
                let userBefore = snapshot.context.activeUser?.id
                let result = try await body(&snapshot)
                if try await store.commit(clientID: record.clientID, writes: snapshot.writes()) {
                    if snapshot.context.activeUser?.id != userBefore {
                        try await store.setActiveUser(clientID: record.clientID, userID: snapshot.context.activeUser?.id)
                    }
                    if !snapshot.lostGrants.isEmpty {
                        try await validator.revocations.add(snapshot.lostGrants.map {
                            RevocationRecord(subject: .grant(clientID: record.clientID, check: $0), revokedAt: snapshot.context.now)
                        })
                    }
                    return result
                }
            }
            throw GatehouseError.conflict()
        }
    }

    // MARK: Authorization code

    /// `az/v1/authorization`: a code for the scope if every check it maps to is in success. Returns the URI to
    /// redirect to.
    public func authorize(query: [String: String], host: String?) async throws -> String {
        guard query["response_type"] == "code" else {
            throw GatehouseError(.badRequest, "unsupported_response_type", "response_type must be code", style: .oauth)
        }
        guard let clientID = query["client_id"], !clientID.isEmpty else { throw GatehouseError.invalidRequest("client_id is required") }
        let (record, application) = try await registeredClient(clientID)
        guard let redirectURI = query["redirect_uri"],
            RedirectURI.isValid(redirectURI, clientID: clientID, platform: record.data.application.clientPlatform, host: host)
        else {
            throw GatehouseError(.badRequest, "INVALID_REDIRECT_URI", "redirect_uri is missing or not allowed for this client.")
        }
        let scope = Scope(query["scope"])
        let checks = try checks(of: application, for: scope)
        let grant = try await withClient(record) { snapshot -> (expiresAt: Int64, checks: [String], user: String?)? in
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
            return (expiresAt, checks.map(\.check.name), snapshot.context.activeUser?.id)
        }
        guard let grant else {
            throw GatehouseError(
                .forbidden, "ACCESS_DENIED",
                "The security checks of scope '\(scope.normalized.prefix(256))' have not all succeeded; pre-authorize first.")
        }
        let code = Self.randomToken()
        try await store.insertCode(
            AuthorizationCodeRecord(
                codeHash: Self.hash(code), clientID: clientID, scope: scope.normalized, redirectURI: redirectURI,
                expiresAt: Clock.nowMillis() + codeLifetime, tokenExpiresAt: grant.expiresAt, checks: grant.checks, userID: grant.user))
        return redirectURI + "?code=" + code
    }

    // MARK: Token

    /// `az/v1/token`: `authorization_code` with a client assertion, or `client_credentials` with HTTP Basic.
    public func token(form: [String: String], authorization: String?, address: String? = nil) async throws -> TokenResponse {
        switch form["grant_type"] {
        case "authorization_code":
            return try await exchangeCode(form: form, address: address)
        case "client_credentials":
            return try await clientCredentials(form: form, authorization: authorization, address: address)
        case nil, "":
            throw GatehouseError(.badRequest, "invalid_request", "grant_type is required", style: .oauth)
        case let other?:
            throw GatehouseError(.badRequest, "unsupported_grant_type", "grant_type '\(other.prefix(64))' is not supported", style: .oauth)
        }
    }

    private func exchangeCode(form: [String: String], address: String?) async throws -> TokenResponse {
        guard let code = form["code"], !code.isEmpty else {
            throw GatehouseError(.badRequest, "invalid_request", "code is required", style: .oauth)
        }
        let now = Clock.nowMillis()
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
            iss: .init(value: issuer), sub: .init(value: record.userID ?? client.clientID), aud: nil,
            exp: .init(value: Date(timeIntervalSince1970: Double(now / 1000 + Int64(expiresIn)))),
            iat: .init(value: Date(timeIntervalSince1970: Double(now / 1000))), iat_ms: now, jti: .init(value: Self.randomToken(bytes: 16)),
            scope: record.scope, client_id: client.clientID,
            app: .init(id: app.id, clientPlatform: app.clientPlatform, version: app.version),
            checks: record.checks, user: record.userID)
        let token = TokenResponse(accessToken: try await signer.sign(claims), expiresIn: expiresIn, scope: record.scope)
        metrics.tokenIssued(grant: "authorization_code")
        await audit.record("token.issued", clientID: client.clientID, application: app.id, user: record.userID, address: address,
                           detail: "scope '\(record.scope)'")
        return token
    }

    /// The lifetime of a confidential client's token, seconds.
    let confidentialTokenLifetime = 3600

    private func clientCredentials(form: [String: String], authorization: String?, address: String?) async throws -> TokenResponse {
        guard let client = try await confidentialClients.authenticate(authorization: authorization) else {
            throw GatehouseError.invalidConfidentialClient
        }
        let scope = Scope(form["scope"])
        guard client.allows(scope) else {
            throw GatehouseError(.badRequest, "invalid_scope", "Scope '\(scope.normalized.prefix(256))' is not allowed for client \(client.id).", style: .oauth)
        }
        let now = Clock.nowMillis()
        let claims = AccessTokenClaims(
            iss: .init(value: issuer), sub: .init(value: client.id), aud: nil,
            exp: .init(value: Date(timeIntervalSince1970: Double(now / 1000 + Int64(confidentialTokenLifetime)))),
            iat: .init(value: Date(timeIntervalSince1970: Double(now / 1000))), iat_ms: now, jti: .init(value: Self.randomToken(bytes: 16)),
            scope: scope.normalized, client_id: client.id, app: nil, checks: [], user: nil)
        let token = TokenResponse(accessToken: try await signer.sign(claims), expiresIn: confidentialTokenLifetime, scope: scope.normalized)
        metrics.tokenIssued(grant: "client_credentials")
        await audit.record("token.issued", clientID: client.id, address: address, actor: client.id, detail: "scope '\(scope.normalized)'")
        return token
    }

    // MARK: Introspection and revocation

    /// The scope a caller of the introspection endpoint needs.
    public static let introspectScope = "authorization.introspect"

    /// `az/v1/introspection`: for a confidential client holding `authorization.introspect` (by its bearer token
    /// or, as RFC 7662 allows, by HTTP Basic), what a token grants; `{"active":false}` for anything not valid now.
    public func introspect(form: [String: String], authorization: String?) async throws -> JSON {
        if authorization?.lowercased().hasPrefix("basic ") == true {
            guard let client = try await confidentialClients.authenticate(authorization: authorization) else {
                throw GatehouseError.invalidConfidentialClient
            }
            guard client.allows(Scope(Self.introspectScope)) else {
                throw GatehouseError(.forbidden, "insufficient_scope", "Client \(client.id) may not introspect tokens.", style: .oauth)
            }
        } else {
            do {
                _ = try await validator.validate(authorization: authorization, scope: Scope(Self.introspectScope))
            } catch {
                throw GatehouseError(error.status == 403 ? .forbidden : .unauthorized, error.status == 403 ? "insufficient_scope" : "invalid_token",
                                     "The caller needs a valid token with scope \(Self.introspectScope).", style: .oauth,
                                     headers: [.wwwAuthenticate: error.challenge])
            }
        }
        guard let token = form["token"], !token.isEmpty else {
            throw GatehouseError(.badRequest, "invalid_request", "token is required", style: .oauth)
        }
        guard let claims = try? await validator.claims(of: token) else {
            metrics.tokenIntrospected(active: false)
            return ["active": false]
        }
        metrics.tokenIntrospected(active: true)
        var result: JSONObject = [
            "active": true, "scope": .string(claims.scope), "client_id": .string(claims.client_id),
            "exp": .int(Int64(claims.exp.value.timeIntervalSince1970 * 1000)), "iat": .int(claims.iat_ms),
            "sub": .string(claims.sub.value), "iss": .string(claims.iss.value), "jti": .string(claims.jti.value),
            "token_type": "Bearer", "username": .string(claims.user ?? "anonymous"),
            "mfp-application": .null, "mfp-device": .null, "mfp-user": .null,
            "mfp-checks": .object(Dictionary(uniqueKeysWithValues: claims.checks.map { ($0, JSON.object([:])) })),
        ]
        if let app = claims.app {
            result["mfp-application"] = ["id": .string(app.id), "clientPlatform": .string(app.clientPlatform), "version": JSON(app.version)]
            if let record = try await store.registration(clientID: claims.client_id) {
                let device = record.data.device
                result["mfp-device"] = [
                    "id": .string(device.id), "hardware": JSON(device.hardware), "platform": JSON(device.platform),
                    "deviceDisplayName": JSON(device.deviceDisplayName), "status": "ACTIVE",
                ]
                let stored = try await store.clientState(clientID: claims.client_id)
                let snapshot = ClientSnapshot(registration: record, stored: stored, now: Clock.nowMillis(), logger: logger)
                if let user = snapshot.context.activeUser, user.id == claims.user { result["mfp-user"] = user.json }
            }
        }
        return .object(result)
    }

    /// `az/v1/revoke` (RFC 7009): a client revokes one of its own tokens. Authenticated by a client assertion
    /// (mobile clients) or HTTP Basic (confidential clients); unknown or foreign tokens are ignored.
    public func revoke(form: [String: String], authorization: String?, address: String? = nil) async throws {
        let callerID: String
        if let client = try await confidentialClients.authenticate(authorization: authorization) {
            callerID = client.id
        } else if form["client_assertion"] != nil {
            callerID = try await assertions.verify(form: form, audience: .revocation, jti: nil, now: Clock.nowMillis(), style: .oauth).clientID
        } else {
            throw GatehouseError(.unauthorized, "invalid_client", "Authenticate with a client assertion or HTTP Basic.", style: .oauth)
        }
        guard let token = form["token"], !token.isEmpty else {
            throw GatehouseError(.badRequest, "invalid_request", "token is required", style: .oauth)
        }
        guard let claims = try? await validator.claims(of: token), claims.client_id == callerID else { return }
        try await validator.revocations.add([RevocationRecord(subject: .token(jti: claims.jti.value), revokedAt: Clock.nowMillis())])
        metrics.tokensRevoked(by: "client")
        await audit.record("token.revoked", clientID: claims.client_id, application: claims.app?.id, user: claims.user, address: address,
                           actor: callerID, detail: "one token")
    }

    // MARK: Logout and heartbeat

    /// `preauth/v1/logout`: logs the client out of one check.
    public func logout(form: [String: String]) async throws {
        guard let name = form["security_check"], !name.isEmpty else { throw GatehouseError.invalidRequest("security_check is required") }
        let record = try await assertions.verify(form: form, audience: .logout, jti: nil, now: Clock.nowMillis(), style: .mobileFirst)
        let application = try application(for: record.data)
        guard let check = application.checks[name] else {
            throw GatehouseError(.badRequest, "INVALID_SECURITY_CHECK", "Unknown security check '\(name.prefix(64))'.")
        }
        try await withClient(record) { snapshot in try await snapshot.logout(check) }
    }

    /// `preauth/v1/heartbeat`: records the client's activity.
    public func heartbeat(form: [String: String]) async throws {
        let record = try await assertions.verify(form: form, audience: .heartbeat, jti: nil, now: Clock.nowMillis(), style: .mobileFirst)
        try await withClient(record) { _ in }
    }

    // MARK: Helpers

    static func randomToken(bytes count: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    static func hash(_ secret: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(secret.utf8))))
    }

    static func describe(_ error: JWSError, minimumBits: Int = ClientSignature.defaultMinimumBits) -> String {
        switch error {
        case .malformed: "not a well-formed JWS"
        case .unsupportedAlgorithm(let alg): "algorithm '\(alg.prefix(16))' is not supported; use RS256"
        case .invalidKey: "the key is not an RSA key of \(minimumBits) bits or more"
        case .badSignature: "the signature does not verify"
        }
    }
}

/// The aggregated answer of a pre-authorization round (reference §3.5): failures win over challenges, which
/// win over successes; every answer carries `clockSynchronization`.
public struct PreauthorizeOutcome: Sendable {
    public let response: AuthorizationResponse
    /// Epoch ms.
    public let serverTime: Int64

    /// 200, 401 or 403.
    public var status: Int {
        switch response.type {
        case .failure: 403
        case .challenge: 401
        case .success, nil: 200
        }
    }

    /// The JSON body.
    public var body: PreauthorizeResponse {
        var successes = response.successes.mapValues { JSON.object($0.data) }
        successes[ProtocolNames.clockSynchronization] = ["serverTimeStamp": .int(serverTime)]
        switch response.type {
        case .failure: return PreauthorizeResponse(successes: successes, failures: response.failures)
        case .challenge: return PreauthorizeResponse(successes: successes, challenges: response.challenges)
        case .success, nil: return PreauthorizeResponse(successes: successes)
        }
    }
}
