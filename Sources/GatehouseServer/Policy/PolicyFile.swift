import GatehouseChecks
import GatehouseProtocol

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
    }

    public struct User: Codable, Sendable {
        public var username: String
        public var displayName: String?
        /// A bcrypt hash of the password.
        public var passwordHash: String
        public var attributes: [String: String]?
    }

    public struct ConfidentialClientEntry: Codable, Sendable {
        public var id: String
        public var displayName: String?
        /// A bcrypt hash of the secret.
        public var secretHash: String
        /// Space-separated allowed scope elements, `*` wildcards allowed.
        public var allowedScope: String
    }

    /// Per-account lockout of password logins (users, confidential clients); see ``AccountLockoutPolicy``.
    public typealias AccountLockout = AccountLockoutSettings

    /// Registrations allowed per source address and window (per node).
    public struct RegistrationThrottle: Codable, Sendable {
        /// Registrations per address in a window (300); 0 disables the throttle.
        public var perAddress: Int?
        /// The window, seconds (60).
        public var windowSec: Int?
    }

    public var accountLockout: AccountLockout?
    public var registrationThrottle: RegistrationThrottle?
    public var securityChecks: [String: CheckDefinition]?
    public var confidentialClients: [ConfidentialClientEntry]?
    public var applications: [Application]?
    public var users: [User]?
}
