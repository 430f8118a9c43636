public import GatehouseChecks
import GatehouseHTTP
public import GatehouseProtocol

/// The policy file as written (YAML): applications, their scope mappings, the security checks and the users.
///
/// ```yaml
/// securityChecks:
///   PinCodeAttempts:
///     class: PinCodeAttempts
///     properties: { pinCode: "1234", maxAttempts: 3, blockedStateExpirationSec: 60 }
/// applications:
///   - id: com.sample.pincodeswift
///     platform: ios
///     scopeElementMapping: { accessRestricted: PinCodeAttempts }
///     maxTokenExpiration: 3600
/// users:
///   - { username: john, displayName: John, passwordHash: "$2b$10$..." }
/// confidentialClients:
///   - { id: balance-service, secretHash: "$2b$10$...", allowedScope: "authorization.introspect" }
/// ```
public struct PolicyFile: Codable, Sendable {
    public struct CheckDefinition: Codable, Sendable {
        /// The check class, as registered in the ``SecurityCheckRegistry``.
        public var `class`: String
        public var properties: [String: JSON]?
        /// Checks that must succeed before this one runs in a round (MobileFirst's checks that depend on another:
        /// a second factor after the user's login); they run for every scope this check is mapped to.
        public var requires: [String]?
        /// The authentication context class (RFC 9470's `acr`) a success of this check proves: a key of
        /// ``PolicyFile/authenticationContexts``.
        public var acr: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case `class`, properties, requires, acr }
    }

    public struct Application: Codable, Sendable {
        public var id: String
        /// `ios`, `android`, `web`, ...
        public var platform: String
        /// The one version allowed; any version when absent.
        public var version: String?
        /// Scope element → space-separated check names (`""` maps to no check).
        public var scopeElementMapping: [String: String]?
        /// Scope elements added to every protected request of the application.
        public var mandatoryScope: String?
        /// The longest a token may live, seconds; 3600 by default.
        public var maxTokenExpiration: Int?
        /// Per-application property overrides, by check name.
        public var securityCheckConfigurations: [String: [String: JSON]]?
        /// The shortest RSA client key accepted, bits; 2048 by default. Lower it (down to 512) only for legacy
        /// MobileFirst apps whose SDK generates small keys; a warning is logged at start.
        public var minimumClientKeyBits: Int?
        /// Web origins (`https://app.example.com[:port]`) from which the app's pages may call the runtime API
        /// (CORS). No wildcard: every origin is named.
        public var allowedOrigins: [String]?
        /// Every pre-authorization round must carry a proof signed by the client's registered key
        /// (``ProofOfPossession``; the Swift SDK sends it): a stranger who knows a client id cannot answer its
        /// challenges. Off by default: MobileFirst's own SDKs do not send it.
        public var requireProofOfPossession: Bool?
        /// The status of the application's versions (MobileFirst's remote disable and administrator messages:
        /// ``RemoteDisable``), first match wins; versions no rule matches are active.
        public var versions: [VersionStatus]?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, platform, version, scopeElementMapping, mandatoryScope, maxTokenExpiration, securityCheckConfigurations,
                 minimumClientKeyBits, allowedOrigins, requireProofOfPossession, versions
        }
    }

    /// The status of some versions of an application (``RemoteDisable/Rule``).
    public struct VersionStatus: Codable, Sendable {
        /// `*` (the default: every version, and web apps, which register none), `2.1`, `< 2.0`, `<= 1.4`, `>= 3`.
        public var versions: String?
        /// `active`, `notify` or `disabled`.
        public var status: String
        /// The message shown (required with notify and disabled).
        public var message: String?
        /// The message by locale (`de: "…"`), chosen by the request's `Accept-Language`.
        public var messages: [String: String]?
        /// Where the new version is (disabled: the dialog's upgrade button).
        public var downloadLink: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case versions, status, message, messages, downloadLink }
    }

    public struct User: Codable, Sendable {
        public var username: String
        public var displayName: String?
        /// A bcrypt hash of the password.
        public var passwordHash: String
        public var attributes: [String: String]?
        enum CodingKeys: String, CodingKey, CaseIterable { case username, displayName, passwordHash, attributes }
    }

    public struct ConfidentialClientEntry: Codable, Sendable {
        public var id: String
        public var displayName: String?
        /// How it authenticates at the token endpoint (RFC 8705 §2's names): `client_secret_basic` (the default: HTTP
        /// Basic with a secret), `tls_client_auth` (a certificate of a `--tls-client-ca` authority with
        /// ``tlsClientAuthSubjectDN``) or `self_signed_tls_client_auth` (the certificate whose ``certificateSHA256``
        /// is given). Tokens of a client authenticated by certificate are bound to it.
        public var tokenEndpointAuthMethod: String?
        /// A bcrypt hash of the secret (`client_secret_basic`).
        public var secretHash: String?
        /// `tls_client_auth`: the certificate's subject, as RFC 4514 writes it (`CN=balance-service,O=Example Bank`).
        public var tlsClientAuthSubjectDN: String?
        /// `self_signed_tls_client_auth`: the certificate's `x5t#S256` (base64url SHA-256 of its DER).
        public var certificateSHA256: String?
        /// Space-separated allowed scope elements, `*` wildcards allowed.
        public var allowedScope: String
        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, displayName, tokenEndpointAuthMethod, secretHash, tlsClientAuthSubjectDN, certificateSHA256, allowedScope
        }
    }

    /// A web app (or any OpenID Connect relying party) that signs users in through Gatehouse's hosted sign-in page:
    /// the authorization code flow with PKCE (``OpenIDClient``).
    ///
    /// ```yaml
    /// openIDClients:
    ///   - id: intranet
    ///     secretHash: "$2b$12$..."          # client_secret_basic / client_secret_post; none: a public client (PKCE S256)
    ///     redirectURIs: ["https://intranet.example.com/oidc/callback"]
    ///     postLogoutRedirectURIs: ["https://intranet.example.com/"]
    ///     allowedScope: "openid profile email offline_access"
    ///     scopeElementMapping: { openid: UserLogin }
    ///     idTokenSigningAlg: RS256
    /// ```
    public struct OpenIDClientEntry: Codable, Sendable {
        public var id: String
        /// The name the sign-in page shows ("Sign in to …").
        public var displayName: String?
        /// A bcrypt hash of the secret (`client_secret_basic`, `client_secret_post`); absent: a public client, which
        /// must use PKCE with S256.
        public var secretHash: String?
        /// The redirect URIs, matched exactly (no wildcard, no prefix).
        public var redirectURIs: [String]
        /// Where RP-initiated logout may send the browser afterwards, matched exactly.
        public var postLogoutRedirectURIs: [String]?
        /// Space-separated scope values the client may ask for (`openid` is always allowed).
        public var allowedScope: String?
        /// Scope value → space-separated check names the sign-in runs for it (`openid: UserLogin`). Checks proving a
        /// higher `acr` are added when the client asks for it with `acr_values`.
        public var scopeElementMapping: [String: String]?
        /// `RS256` (the default, as OpenID Connect Discovery requires) or `ES256`.
        public var idTokenSigningAlg: String?
        /// The access token's and id_token's lifetime, seconds (300).
        public var accessTokenLifetimeSec: Int?
        /// A refresh token's lifetime, seconds (86400); issued for the `offline_access` scope only.
        public var refreshTokenLifetimeSec: Int?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, displayName, secretHash, redirectURIs, postLogoutRedirectURIs, allowedScope, scopeElementMapping, idTokenSigningAlg
            case accessTokenLifetimeSec, refreshTokenLifetimeSec
        }
    }

    /// Per-account lockout of password logins (users, confidential clients); see ``AccountLockoutPolicy``.
    public typealias AccountLockout = AccountLockoutSettings

    /// Registrations allowed per source address and window (per node).
    public struct RegistrationThrottle: Codable, Sendable {
        /// Registrations per address in a window (300); 0 disables the throttle.
        public var perAddress: Int?
        /// The window, seconds (60).
        public var windowSec: Int?
        enum CodingKeys: String, CodingKey, CaseIterable { case perAddress, windowSec }
    }

    public var accountLockout: AccountLockout?
    /// Password checks per source address: their failures lock the source (``SourceThrottle``), the same keys as
    /// ``accountLockout`` with other defaults (``SourceThrottle/defaultPolicy``); `threshold: 0` turns it off.
    public var sourceThrottle: AccountLockout?
    public var registrationThrottle: RegistrationThrottle?
    public var securityChecks: [String: CheckDefinition]?
    public var confidentialClients: [ConfidentialClientEntry]?
    /// OpenID Connect relying parties (``OpenIDClientEntry``).
    public var openIDClients: [OpenIDClientEntry]?
    public var applications: [Application]?
    public var users: [User]?
    /// Authentication context classes (`acr` values) and their levels, as Keycloak maps ACR to levels of
    /// assurance: a token carries the `acr` of the highest level among the checks that granted it.
    public var authenticationContexts: [String: Int]?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case accountLockout, sourceThrottle, registrationThrottle, securityChecks, confidentialClients, applications, users
        case authenticationContexts, openIDClients
    }

    /// The keys a policy may hold: any other is refused, naming its place (a misspelt key would otherwise be a
    /// setting silently left out). Check properties are the checks' own business (they warn about unknown ones).
    static let yamlKeys: YAMLKeys = .mapping(CodingKeys.self, [
        .accountLockout: .mapping(AccountLockoutSettings.CodingKeys.self),
        .sourceThrottle: .mapping(AccountLockoutSettings.CodingKeys.self),
        .registrationThrottle: .mapping(RegistrationThrottle.CodingKeys.self),
        .securityChecks: .entries(.mapping(CheckDefinition.CodingKeys.self)),
        .confidentialClients: .list(.mapping(ConfidentialClientEntry.CodingKeys.self)),
        .applications: .list(.mapping(Application.CodingKeys.self, [.versions: .list(.mapping(VersionStatus.CodingKeys.self))])),
        .users: .list(.mapping(User.CodingKeys.self)),
        .authenticationContexts: .entries(.any),
        .openIDClients: .list(.mapping(OpenIDClientEntry.CodingKeys.self)),
    ])
}
