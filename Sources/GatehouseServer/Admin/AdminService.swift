import Foundation
import Hummingbird
import GatehouseChecks
import GatehouseProtocol
import GatehouseResourceServer
import GatehouseStore

/// The operations of the admin API (`/admin/v1`), apart from HTTP. Every change is written to the audit log with
/// the acting confidential client.
public struct AdminService: Sendable {
    /// The scope that allows every admin operation.
    public static let writeScope = "gatehouse.admin"
    /// The scope that allows the admin API's reads only.
    public static let readScope = "gatehouse.admin.read"
    /// The scope that allows reading `/metrics` (when it asks for a token), and nothing else.
    public static let metricsScope = "gatehouse.metrics"
    /// The most items of one page.
    static let maxPage = 1000

    let service: AuthorizationService
    /// The check classes a policy may name (for validating a new policy).
    let registry: SecurityCheckRegistry
    var store: any GatehouseStore { service.store }

    init(service: AuthorizationService, registry: SecurityCheckRegistry = .builtIn) {
        self.service = service
        self.registry = registry
    }

    // MARK: Authorization

    /// The confidential client whose bearer token allows the operation (a write needs ``writeScope``, a read either
    /// scope): 401 without a valid token, 403 for a token of a mobile client or without the scope.
    ///
    /// - Parameters:
    ///   - authorization: the request's `Authorization` value.
    ///   - connection: the request's connection, for a token bound to its TLS client certificate.
    func authorize(_ authorization: String?, write: Bool, connection: some ClientCertificateRequestContext) async throws -> String {
        try await authorize(authorization, anyOf: write ? [Self.writeScope] : [Self.readScope, Self.writeScope], context: connection)
    }

    /// The confidential client whose bearer token allows reading `/metrics`: ``metricsScope`` or either admin scope.
    func authorizeMetrics(_ authorization: String?, connection: some ClientCertificateRequestContext) async throws -> String {
        try await authorize(authorization, anyOf: [Self.metricsScope, Self.writeScope, Self.readScope], context: connection)
    }

    /// The confidential client whose bearer token holds one of `scopes` (the first is named in a refusal); a token
    /// bound to a TLS client certificate only from a connection that presents it (RFC 8705).
    private func authorize(_ authorization: String?, anyOf scopes: [String], context: some ClientCertificateRequestContext) async throws -> String {
        let claims: AccessTokenClaims
        do {
            claims = try await service.validator.validate(authorization: authorization, scope: Scope(nil))
            try await PresentedCertificate.check(binding: claims.cnf?.x5tS256, of: context)
        } catch {
            // Said apart: no token at all, or one that no longer works (expired, revoked, its key retired — retiring
            // the key that signed an operator's token signs the operator out).
            let message = error.code == .missing
                ? "This needs a confidential client's bearer token."
                : "The bearer token is not valid (malformed, expired, revoked, or signed by a retired key): obtain a new one."
            throw AdminError.unauthenticated(message, challenge: error.challenge ?? BearerAnswer.invalidToken)
        }
        let needed = scopes.first ?? Self.writeScope
        let scope = Scope(claims.scope)
        let allowed = scopes.contains { scope.contains(Scope($0)) }
        guard claims.app == nil, service.policy.confidentialClients.contains(where: { $0.id == claims.client_id }), allowed else {
            throw AdminError.forbidden("This operation needs a confidential client's token with scope \(needed).",
                                      challenge: BearerAnswer.insufficientScope(Scope(needed)))
        }
        return claims.client_id
    }

    // MARK: Registrations


    /// A page of registrations: `{"registrations":[...],"next":"<cursor>"}` (`next` only when there may be more).
    /// `query.limit` is the page's size.
    func registrations(_ query: RegistrationQuery) async throws -> JSON {
        let (page, next) = try await registrationPage(query)
        var result: JSONObject = ["registrations": .array(page.map { Self.json($0.registration, user: $0.userID) })]
        if let next { result["next"] = .string(next) }
        return .object(result)
    }

    /// The registrations of one page (`query.limit` of them at most) and the cursor of the next page when there is
    /// one (one more is read to know).
    func registrationPage(_ query: RegistrationQuery) async throws -> (page: [RegistrationListing], next: String?) {
        var fetch = query
        fetch.limit = query.limit + 1
        let found = try await store.registrations(fetch)
        let page = Array(found.prefix(query.limit))
        return (page, found.count > query.limit ? page.last?.registration.clientID : nil)
    }

    static func json(_ record: ClientRegistrationRecord, user: String?) -> JSON {
        let device = record.data.device
        let app = record.data.application
        return [
            "clientId": .string(record.clientID),
            "application": ["id": .string(app.id), "clientPlatform": .string(app.clientPlatform), "version": JSON(app.version)],
            "device": ["id": .string(device.id), "hardware": JSON(device.hardware), "platform": JSON(device.platform),
                       "deviceDisplayName": JSON(device.deviceDisplayName)],
            "user": JSON(user), "createdAt": .int(record.createdAt), "updatedAt": .int(record.updatedAt),
        ]
    }

    private func record(_ clientID: String) async throws -> ClientRegistrationRecord {
        guard let record = try await store.registration(clientID: clientID) else {
            throw AdminError.notFound("No client is registered with id '\(clientID.prefix(64))'.")
        }
        return record
    }

    /// The checks of a client's application (every check of the policy when its application is gone from it).
    private func checks(of record: ClientRegistrationRecord) -> [any SecurityCheck] {
        if let application = service.policy.application(for: record.data.application) {
            return application.checks.values.sorted { $0.name < $1.name }
        }
        var byName: [String: any SecurityCheck] = [:]
        for application in service.policy.applications { byName.merge(application.checks) { first, _ in first } }
        return byName.values.sorted { $0.name < $1.name }
    }

    /// One client: its registration and the state of each check of its application.
    func client(_ clientID: String) async throws -> JSON {
        let record = try await record(clientID)
        let snapshot = ClientSnapshot(registration: record, stored: try await store.clientState(clientID: clientID),
                                      now: EpochTime.nowMillis(), logger: service.logger)
        guard case .object(var result) = Self.json(record, user: snapshot.context.activeUser?.id) else { return .null }
        result["checks"] = .array(checks(of: record).map { snapshot.view(of: $0) })
        return .object(result)
    }

    /// Resets (unblocks) one check of a client: its state starts anew and the tokens it granted stop holding.
    func resetCheck(_ clientID: String, check name: String, actor: String, address: String?) async throws -> JSON {
        let record = try await record(clientID)
        guard let check = checks(of: record).first(where: { $0.name == name }) else {
            throw AdminError.notFound("Client '\(clientID.prefix(64))' has no security check '\(name.prefix(64))'.")
        }
        let view = try await service.withClient(record) { snapshot in
            try snapshot.reset(check)
            return snapshot.view(of: check)
        }
        service.audit.record("admin.check.reset", clientID: clientID, application: record.data.application.id, check: name,
                                   address: address, actor: actor)
        return view
    }

    /// Revokes every token the client's checks granted until now.
    func revokeTokens(_ clientID: String, actor: String, address: String?) async throws {
        let record = try await record(clientID)
        try await revokeGrants(of: record)
        service.metrics.tokensRevoked(by: "admin")
        service.audit.record("admin.tokens.revoke", clientID: clientID, application: record.data.application.id,
                                   address: address, actor: actor)
    }

    func revokeGrants(of record: ClientRegistrationRecord) async throws {
        let now = EpochTime.nowMillis()
        try await service.validator.revocations.add(checks(of: record).map {
            RevocationRecord(subject: .grant(clientID: record.clientID, check: $0.name), revokedAt: now)
        })
    }

    /// Deletes a registration and its state, revoking its tokens first; the client must register again.
    func deleteRegistration(_ clientID: String, actor: String, address: String?) async throws {
        let record = try await record(clientID)
        try await revokeGrants(of: record)
        _ = try await service.locks.withLock(clientID) { try await store.deleteRegistration(clientID: clientID) }
        service.introspectedClients.forget(clientID)
        service.audit.record("admin.registration.delete", clientID: clientID, application: record.data.application.id,
                                   address: address, actor: actor)
    }

    // MARK: Accounts

    /// The accounts locked now by the per-account lockout (`user:<name>`) and the sources by their throttle (`source:<address>`).
    func lockedAccounts(limit: Int) async throws -> JSON {
        let accounts = try await store.lockedAccounts(now: EpochTime.nowMillis(), limit: limit)
        return ["accounts": .array(accounts.map {
            ["account": .string($0.account), "failures": .int(Int64($0.state.failures)), "lockedUntil": .int($0.state.lockedUntil),
             "lockouts": .int(Int64($0.state.lockouts))]
        })]
    }

    /// Unlocks an account: forgets its failed logins.
    func unlock(_ account: String, actor: String, address: String?) async throws {
        guard try await store.accountFailures(account) != nil else {
            // Accounts are named with their kind: the usual slip is a bare name.
            let hint = account.contains(":") ? "" : " Accounts are named user:<name> or source:<address>, as GET /admin/v1/accounts lists them."
            throw AdminError.notFound("Account '\(account.prefix(128))' has no failed logins.\(hint)")
        }
        try await store.deleteAccountFailures(account)
        service.policyWatcher.compiler.knownLockouts.forget(account)
        service.audit.record("admin.account.unlock", address: address, actor: actor, detail: String(account.prefix(128)))
    }

    // MARK: Keys

    /// The signing keys (never their private parts), oldest first, with the one this node signs with.
    func keys() async throws -> JSON {
        let current = service.signer.currentKID
        return ["keys": .array(try await store.signingKeys().map {
            ["kid": .string($0.kid), "algorithm": .string($0.algorithm), "createdAt": .int($0.createdAt),
             "retiredAt": $0.retiredAt.map { .int($0) } ?? .null, "current": .bool($0.kid == current)]
        })]
    }

    /// Stores a new key that becomes current on every node.
    func rotateKey(actor: String, address: String?) async throws -> String {
        let kid = try await service.signer.rotate()
        service.audit.record("admin.key.rotate", address: address, actor: actor, detail: "kid \(kid)")
        return kid
    }

    /// Retires a key: no node signs or verifies with it any more.
    /// Retires `kid`; `false` when it was retired already (answered alike, not audited again).
    func retireKey(_ kid: String, actor: String, address: String?) async throws -> Bool {
        let retiredNow: Bool
        do {
            retiredNow = try await TokenSigner.retire(kid: kid, in: store)
        } catch StoreError.notFound {
            throw AdminError.notFound("No signing key has kid '\(kid.prefix(64))'.")
        } catch let error as TokenSigner.KeyError {
            throw AdminError.currentKey("\(error)")
        }
        guard retiredNow else { return false }
        try await service.signer.refresh()
        service.audit.record("admin.key.retire", address: address, actor: actor, detail: "kid \(kid.prefix(64))")
        return true
    }

    // MARK: Audit

    /// A page of the audit log, oldest first, of the `limit` events after the id `after`: `{"events":[...],"next":<id>}`.
    func audit(after: Int64, limit: Int) async throws -> JSON {
        await service.audit.flushed()   // this node's events of requests already answered
        let events = try await store.auditEvents(after: after, limit: limit + 1)
        let page = events.prefix(limit)
        var result: JSONObject = ["events": .array(page.map(Self.json))]
        if events.count > limit, let last = page.last { result["next"] = .int(last.id) }
        return .object(result)
    }

    static func json(_ event: AuditEvent) -> JSON {
        var object: JSONObject = ["id": .int(event.id), "time": .int(event.time), "event": .string(event.event)]
        for (key, value) in [("clientId", event.clientID), ("application", event.application), ("user", event.user),
                             ("check", event.check), ("address", event.address), ("node", event.node), ("actor", event.actor),
                             ("detail", event.detail)] {
            if let value { object[key] = .string(value) }
        }
        return .object(object)
    }
}
