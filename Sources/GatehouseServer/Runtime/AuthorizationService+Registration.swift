import Crypto
import Foundation
import GatehouseChecks
public import GatehouseProtocol
public import GatehouseStore
import Logging

/// Self-registration, its updates and reads.
extension AuthorizationService {
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
                throw AuthorizationError.invalidRequest("signedRegistrationData.header must carry the client's public key (jwk)")
            }
            jwk = key.withoutKid
            data = try jws.decodedPayload(as: RegistrationData.self)
        } catch let error as JWSError {
            throw AuthorizationError.invalidRequest("signedRegistrationData: \(Self.describe(error))")
        }
        // An OpenID client's sign-in runs as an application of platform `openid`; only its hosted page registers those.
        guard data.application.clientPlatform.lowercased() != OpenIDClient.platform else {
            throw AuthorizationError.applicationNotRegistered("Platform '\(OpenIDClient.platform)' is reserved for OpenID Connect sign-in.")
        }
        let application = try application(for: data)
        do {
            try ClientSignature.verify(jws, with: jwk, minimumBits: application.minimumClientKeyBits)
        } catch {
            throw AuthorizationError.invalidRequest("signedRegistrationData: \(Self.describe(error, minimumBits: application.minimumClientKeyBits))")
        }
        guard CORS.isAllowed(origin: origin, host: host, application: application) else {
            throw AuthorizationError.originNotAllowed(
                                 "Web pages of origin '\((origin ?? "").prefix(128))' may not register for application \(application.id): "
                                 + "it is not this server's origin (host '\((host ?? "").prefix(128))') nor in the application's allowedOrigins. "
                                 + "Behind a reverse proxy that rewrites Host, add the page's origin to allowedOrigins, or name the proxy "
                                 + "with --trusted-proxy so that its X-Forwarded-Host is believed.")
        }
        let now = EpochTime.nowMillis()
        let clientID = SecureRandom.uuidString()
        try await store.createRegistration(
            ClientRegistrationRecord(clientID: clientID, data: data, publicKey: jwk, createdAt: now, updatedAt: now))
        logger.info("Registered client \(clientID) of \(data.application.id) (\(data.application.clientPlatform) \(data.application.version ?? "any version"))")
        metrics.registration()
        audit.record("registration", clientID: clientID, application: data.application.id, address: address,
                           detail: "device \(data.device.id.prefix(128))")
        return clientID
    }

    /// Updates a registration; the data must be signed with the key the client registered.
    public func updateRegistration(clientID: String, _ request: RegistrationRequest) async throws {
        guard var record = try await store.registration(clientID: clientID) else { throw AuthorizationError.unknownClient(clientID) }
        let data: RegistrationData
        let minimumBits = policy.minimumClientKeyBits(for: record.data.application)
        do {
            try ClientSignature.verify(request.signedRegistrationData, with: record.publicKey, minimumBits: minimumBits)
            data = try request.signedRegistrationData.decodedPayload(as: RegistrationData.self)
        } catch {
            throw AuthorizationError.invalidRequest("signedRegistrationData: \(Self.describe(error, minimumBits: minimumBits))")
        }
        // A registration belongs to one device: another device id is refused as MobileFirst refuses an update it
        // cannot apply (403, after which its SDKs register afresh), so no update moves a client off a blocked device.
        guard data.device.id == record.data.device.id else {
            throw AuthorizationError.forbidden("Invalid request: a registration cannot change its device id; register again.")
        }
        // Nor to another application: its check states (a login, a PIN's success) would be carried over to an
        // application the device may block, escaping a per-application block (issue 54, finding 8). A new version of
        // the same application is an update.
        guard data.application.id == record.data.application.id,
              data.application.clientPlatform.lowercased() == record.data.application.clientPlatform.lowercased() else {
            throw AuthorizationError.forbidden("Invalid request: a registration cannot change its application; register again.")
        }
        _ = try application(for: data)
        record.data = data
        record.updatedAt = EpochTime.nowMillis()
        try await store.updateRegistration(record)
        introspectedClients.forget(clientID)
    }

    /// The registration of the client that signed `assertion`, which must be `clientID`.
    ///
    /// - Throws: ``AuthorizationError`` for an assertion refused or another client's.
    public func registration(clientID: String, assertion: ClientAssertion) async throws -> ClientRegistrationRecord {
        let record = try await assertions.verify(assertion, audience: .registration, jti: nil, now: EpochTime.nowMillis())
        guard record.clientID == clientID else { throw AuthorizationError.forbidden("The assertion was signed by another client.") }
        return record
    }

    func application(for data: RegistrationData) throws -> ApplicationPolicy {
        guard let application = policy.application(for: data.application) else {
            throw AuthorizationError.applicationNotRegistered(
                "Application '\(data.application.id.prefix(128))' for platform '\(data.application.clientPlatform.prefix(32))' version '\((data.application.version ?? "none").prefix(32))' is not registered in the server's policy.")
        }
        return application
    }
}
