import Crypto
import Foundation
import GatehouseChecks
import GatehouseProtocol
public import GatehouseStore
import Logging

/// The authorization server's logic, apart from HTTP: registration, pre-authorization rounds, codes, tokens,
/// logout and heartbeat. The routes translate HTTP to these calls and back.
public struct AuthorizationService: Sendable {
    /// The policy in force, replaced whole when an operator applies a new one.
    public let policies: PolicyInForce
    /// The policy in force now.
    public var policy: SecurityPolicy { policies.current.policy }
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
    var confidentialClients: ConfidentialClients { policies.current.confidentialClients }
    /// Applies policies sent by operators and follows those other nodes applied.
    let policyWatcher: PolicyWatcher
    /// The audit log (in the store).
    public let audit: AuditLog
    /// The Prometheus metrics (`/metrics`).
    public let metrics: GatehouseMetrics
    /// Clients' devices and active users as introspection answers them, kept for a moment.
    let introspectedClients: IntrospectedClients
    /// Rounds tried again after losing a race for the client's state before answering 409.
    let maxRoundRetries = 8
    /// The lifetime of a confidential client's token, seconds.
    let confidentialTokenLifetime = 3600
    /// How long an authorization code can be exchanged, ms.
    let codeLifetime: Int64 = 120_000
    /// The authorities of `tls_client_auth` clients' certificates (``ServerConfiguration/clientCertificateAuthorities``).
    var clientCertificateAuthorities: ClientCertificateAuthorities?

    init(policyWatcher: PolicyWatcher, signer: TokenSigner, revocations: RevocationList, issuer: IssuerName,
         audit: AuditLog, metrics: GatehouseMetrics = GatehouseMetrics(),
         introspectedClients: IntrospectedClients = IntrospectedClients(), logger: Logger) {
        self.introspectedClients = introspectedClients
        self.policies = policyWatcher.policies
        self.policyWatcher = policyWatcher
        self.audit = audit
        self.metrics = metrics
        self.store = policyWatcher.store
        self.signer = signer
        self.issuerName = issuer
        self.logger = logger
        self.assertions = ClientAssertionVerifier(store: policyWatcher.store, policies: policyWatcher.policies)
        self.validator = TokenValidator(signer: signer, revocations: revocations)
    }

    // MARK: Helpers

    /// `count` random bytes, base64url: BoringSSL's generator in one call (`UInt8.random` per byte was one
    /// `getrandom` system call per byte).
    static func randomToken(bytes count: Int = 32) -> String {
        Base64URL.encode(SecureRandom.bytes(count))
    }

    static func hash(_ secret: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(secret.utf8))))
    }

    static func describe(_ error: JWSError, minimumBits: Int = ClientSignature.defaultMinimumBits) -> String {
        switch error.code {
        case .unsupportedAlgorithm: "algorithm '\((error.algorithm ?? "").prefix(16))' is not supported; use RS256"
        case .invalidKey: "the key is not an RSA key of \(minimumBits) bits or more"
        case .badSignature: "the signature does not verify"
        default: "not a well-formed JWS"
        }
    }
}
