import Crypto
import Foundation
import GatehouseChecks
public import GatehouseProtocol
import GatehouseResourceServer
import HummingbirdBcrypt
import Synchronization

/// A confidential client (MobileFirst Developer Center, “Confidential clients”): a back-end with an id and a secret
/// (HTTP Basic, `client_secret_basic`) or a TLS client certificate (RFC 8705: `tls_client_auth`,
/// `self_signed_tls_client_auth`), allowed some scopes.
public struct ConfidentialClient: Sendable {
    public let id: String
    public let displayName: String
    /// A bcrypt hash of the secret; `nil` for a client that authenticates by certificate only.
    let secretHash: String?
    /// The certificate that authenticates the client, if it authenticates by one; its tokens are bound to it.
    public let certificate: CertificateAuthentication?
    /// Allowed scope elements; `*` matches any run of characters (`*` alone allows every scope).
    public let allowedScope: [String]

    public init(id: String, displayName: String, secretHash: String?, certificate: CertificateAuthentication? = nil, allowedScope: [String]) {
        self.id = id
        self.displayName = displayName
        self.secretHash = secretHash
        self.certificate = certificate
        self.allowedScope = allowedScope
    }

    /// Whether every element of `scope` is allowed.
    public func allows(_ scope: Scope) -> Bool {
        scope.customElements.allSatisfy { element in allowedScope.contains { Self.glob($0, matches: element) } }
    }

    static func glob(_ pattern: String, matches text: String) -> Bool {
        // Most patterns are plain scope elements: compared as they are, without splitting.
        guard pattern.utf8.contains(UInt8(ascii: "*")) else { return pattern == text }
        let parts = pattern.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1 else { return pattern == text }
        guard text.hasPrefix(parts[0]) else { return false }
        var rest = Substring(text.dropFirst(parts[0].count))
        for (index, part) in parts.dropFirst().enumerated() {
            let isLast = index == parts.count - 2
            if isLast { return part.isEmpty || rest.hasSuffix(part) }
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return true
    }
}

/// Authenticates confidential clients by HTTP Basic. A secret is checked with bcrypt once; later requests
/// compare SHA-256 digests in constant time, so the token and introspection endpoints stay fast.
///
/// A client is never locked by its id: ten wrong secrets from a stranger locked `demo-admin` (and with it resource
/// servers and the gateway's introspection) for up to a day. Guessing is throttled by the guesser's address instead
/// (``SourceThrottle``: wrong secrets count against the source, on every node); a locked source is refused even a
/// remembered right secret, checked against the node's view of the locked sources (no store read; another node's
/// lock holds here within the policy poll interval).
///
/// A secret shorter than ``minimumSecretLength`` (when set: a node serving beyond loopback) is refused like a wrong
/// one, even when it matches, and said in the node's log once: a hash cannot tell a policy's weak secret when it is
/// loaded, so the first use does (`gatehouse hash-password --new-client-secret` makes a strong one).
final class ConfidentialClients: Sendable {
    private let clients: [String: ConfidentialClient]
    private let verified = Mutex<[String: SHA256.Digest]>([:])
    private let passwords: PasswordVerifier
    /// The shortest secret accepted; `nil`: any.
    let minimumSecretLength: Int?
    /// Told when a client's matching secret is refused for its length (once per client and policy).
    private let onWeakSecret: @Sendable (_ clientID: String, _ length: Int) -> Void
    private let warned = Mutex<Set<String>>([])

    /// The shortest confidential-client secret a node serving beyond loopback accepts.
    static let strongSecretLength = 16

    init(_ clients: [ConfidentialClient], passwords: PasswordVerifier, minimumSecretLength: Int? = nil,
         onWeakSecret: @escaping @Sendable (_ clientID: String, _ length: Int) -> Void = { _, _ in }) {
        self.clients = Dictionary(clients.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        self.passwords = passwords
        self.minimumSecretLength = minimumSecretLength
        self.onWeakSecret = onWeakSecret
    }

    /// The client named by an `Authorization: Basic` header with the right secret, or `nil`.
    func authenticate(authorization: String?) async throws -> ConfidentialClient? {
        guard let (id, secret) = ClientSecretBasic.parse(authorization) else { return nil }
        return try await authenticate(id: id, secret: secret)
    }

    /// The client `id` if `secret` is its secret (HTTP Basic's pair, or a form's `client_id` and `client_secret`), or `nil`.
    func authenticate(id: String, secret: String) async throws -> ConfidentialClient? {
        let account = "client:\(id)"
        let now = EpochTime.nowMillis()
        guard let client = clients[id] else {
            _ = try await passwords.verifyMachineSecret(secret, hash: nil, account: account, now: now)   // the same time as a known client
            return nil
        }
        let digest = SHA256.hash(data: Data(secret.utf8))
        if rememberedSecret(of: id, matches: digest) == true {
            try await passwords.refuseIfSourceLocked(now: now)
            return client
        }
        // A wrong secret of a known client costs the bcrypt run an unknown client's does (refused from memory, it
        // answered in 4 ms against 97: a timing that told which client ids exist), and counts against its source.
        // A client without a secret is refused as a wrong secret is: after the same bcrypt run, counted.
        guard try await passwords.verifyMachineSecret(secret, hash: client.secretHash, account: account, now: now), client.secretHash != nil
        else { return nil }
        if let minimumSecretLength, secret.count < minimumSecretLength {
            if warned.withLock({ $0.insert(id).inserted }) { onWeakSecret(id, secret.count) }
            return nil
        }
        verified.withLock { $0[id] = digest }
        return client
    }

    /// The client `id` when it authenticates by certificate and `presented` is its certificate (RFC 8705 §2); `nil`
    /// otherwise (an unknown id, a secret client, another certificate), counted against the request's source.
    func authenticate(clientID id: String, certificate presented: PresentedCertificate,
                      authorities: ClientCertificateAuthorities?) async throws -> ConfidentialClient? {
        let now = EpochTime.nowMillis()
        try await passwords.refuseIfSourceLocked(now: now)
        guard let client = clients[id], let certificate = client.certificate, await certificate.matches(presented, authorities: authorities) else {
            try await passwords.recordSourceFailure(now: now)
            return nil
        }
        return client
    }

    /// ``authenticate(authorization:)`` from memory alone, for a request answered on the event loop: the client when
    /// its secret was verified before and matches, and the node's view of the locked sources says the request's is not
    /// locked; `nil` for anything else (a wrong secret must be counted, a new one verified: that is
    /// ``authenticate(authorization:)``'s work).
    func rememberedClient(authorization: String) -> ConfidentialClient? {
        guard let (id, secret) = ClientSecretBasic.parse(authorization), let client = clients[id],
              rememberedSecret(of: id, matches: SHA256.hash(data: Data(secret.utf8))) == true,
              passwords.isSourceKnownUnlocked(now: EpochTime.nowMillis())
        else { return nil }
        return client
    }

    /// Whether `digest` is the digest of client `id`'s verified secret (compared in constant time); `nil` when no
    /// secret of it was verified yet.
    private func rememberedSecret(of id: String, matches digest: SHA256.Digest) -> Bool? {
        guard let known = verified.withLock({ $0[id] }) else { return nil }
        var difference: UInt8 = 0
        for (a, b) in zip(known, digest) { difference |= a ^ b }
        return difference == 0
    }
}
