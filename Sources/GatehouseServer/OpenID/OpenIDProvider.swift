import Crypto
import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore

/// The OpenID Provider: OpenID Connect Core's authorization code flow (with PKCE) on top of the authorization
/// server — the same users, security checks, `acr` levels, signing keys and store.
///
/// A browser's sign-in session is a cookie (``sessionCookie``, random, HttpOnly), and a registration of the sign-in
/// application (``OpenIDClient/application``) named by a digest of the cookie: the checks keep their state there as
/// they do for an app — so a sign-in of the same browser to any client within the checks' success is single sign-on
/// (each client still asks for the checks of its own mapping and `acr_values`), and `prompt=login` or a `max_age`
/// exceeded starts a new session.
struct OpenIDProvider: Sendable {
    let service: AuthorizationService

    /// The cookie that names a browser's sign-in session.
    static let sessionCookie = "gatehouse_sid"
    /// How long a code can be exchanged, ms.
    static let codeLifetime: Int64 = 60_000

    init(service: AuthorizationService) {
        self.service = service
    }

    var issuer: String { service.issuerName.current }
    var clients: [String: OpenIDClient] { service.policy.openIDClients }
    var store: any GatehouseStore { service.store }

    /// The seal of the pages (derived from the current signing key).
    func seal() throws -> OpenIDRequestSeal {
        guard let signer = service.signer.ring.currentSigner else { throw OpenIDError.server("No signing key.") }
        return OpenIDRequestSeal(signingKey: signer.key)
    }

    /// A new session cookie value: 32 random bytes, base64url.
    static func newSession() -> String { AuthorizationService.randomToken() }

    /// Whether `value` can be a session cookie this server set (43 base64url characters).
    static func isSession(_ value: String?) -> Bool {
        guard let value, value.utf8.count == 43 else { return false }
        return Base64URL.decode(value)?.count == 32
    }

    /// The registration that holds the checks' state of `session`.
    static func registrationID(session: String) -> String {
        let digest = SHA256.hash(data: Data("gatehouse openid session\u{0}\(session)".utf8))
        return "oidc-" + digest.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The registration of `session`, made on first use — counted against `address` as the runtime's registrations are
    /// (``RegistrationThrottle``): a script making new sessions makes no more registrations than a script registering.
    func ensureRegistration(session: String, address: String?) async throws -> String {
        let clientID = Self.registrationID(session: session)
        if try await store.registration(clientID: clientID) != nil { return clientID }
        if let registrations = service.policies.current.registrationThrottle, let address,
           try await !registrations.admit(address, now: EpochTime.nowMillis()) {
            throw OpenIDError(status: 429, error: "too_many_requests", description: "Too many sign-ins from this address; try again later.")
        }
        let now = EpochTime.nowMillis()
        let data = RegistrationData(device: DeviceData(id: clientID, platform: "browser", deviceDisplayName: "Browser (OpenID sign-in)"),
                                    application: ApplicationData(id: OpenIDClient.signInApplication, clientPlatform: OpenIDClient.platform, version: nil))
        // No key: nobody can sign for this registration, so none of the runtime's signed requests can speak for it.
        let record = ClientRegistrationRecord(clientID: clientID, data: data, publicKey: RSAPublicJWK(n: "", e: ""), createdAt: now, updatedAt: now)
        do {
            try await store.createRegistration(record)
        } catch {
            // Two requests of one browser at once: the other one made it.
            guard try await store.registration(clientID: clientID) != nil else { throw error }
        }
        return clientID
    }

    /// The authentication methods (RFC 8176) the checks that signed the user in used.
    static func amr(of checks: [String], in application: ApplicationPolicy) -> [String] {
        var methods: [String] = []
        for name in checks.sorted() {
            guard let check = application.checks[name] else { continue }
            let method: String? = switch check {
            case is any UserAuthenticationSecurityCheck: "pwd"
            case is TOTP: "otp"
            case is Passkey: "hwk"
            case is PinCodeAttempts: "pin"
            default: nil
            }
            if let method, !methods.contains(method) { methods.append(method) }
        }
        if methods.count > 1 { methods.append("mfa") }
        return methods
    }

    /// The claims about `user` that `scope` asks for (OpenID Connect Core §5.4), `sub` always.
    static func userClaims(_ user: UserRecord, scope: Set<String>) -> JSONObject {
        var claims: JSONObject = ["sub": .string(user.username)]
        if scope.contains("profile") {
            claims["name"] = .string(user.displayName)
            claims["preferred_username"] = .string(user.username)
            for name in ["given_name", "family_name", "middle_name", "nickname", "profile", "picture", "website", "gender", "birthdate",
                         "zoneinfo", "locale"] {
                if let value = user.attributes[name] { claims[name] = .string(value) }
            }
        }
        if scope.contains("email"), let email = user.attributes["email"] {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(user.attributes["email_verified"] == "true")
        }
        if scope.contains("phone"), let phone = user.attributes["phone_number"] {
            claims["phone_number"] = .string(phone)
            claims["phone_number_verified"] = .bool(user.attributes["phone_number_verified"] == "true")
        }
        return claims
    }
}

/// An error of the OpenID endpoints: an OAuth error (RFC 6749 §5.2) for the token and userinfo endpoints, a page for
/// the browser's.
struct OpenIDError: Error, Equatable {
    var status: Int
    var error: String
    var description: String
    /// `WWW-Authenticate` (invalid_client with HTTP Basic, invalid_token).
    var challenge: String?

    static func invalidRequest(_ description: String) -> Self { .init(status: 400, error: "invalid_request", description: description) }
    static func invalidGrant(_ description: String) -> Self { .init(status: 400, error: "invalid_grant", description: description) }
    static func invalidClient(basic: Bool) -> Self {
        .init(status: 401, error: "invalid_client", description: "Client authentication failed.",
              challenge: basic ? "Basic realm=\"gatehouse\"" : nil)
    }
    static func invalidToken(_ description: String) -> Self {
        .init(status: 401, error: "invalid_token", description: description,
              challenge: "Bearer error=\"invalid_token\", error_description=\"\(description)\"")
    }
    static func server(_ description: String) -> Self { .init(status: 500, error: "server_error", description: description) }
}
