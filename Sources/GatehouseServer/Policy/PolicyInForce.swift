import GatehouseChecks
import GatehouseStore
import Logging
import Synchronization

/// The policy every request reads, with what is built from it (confidential clients, the registration throttle,
/// CORS origins): replaced whole, in one step, when an operator applies a new policy — on this node through the
/// admin API, or on another node sharing the store (seen by ``PolicyWatcher``). A request reads the snapshot in
/// force when it asks; nothing is torn down under it, so no request fails during a switch.
public final class PolicyInForce: Sendable {
    /// One policy and what is built from it.
    public struct Snapshot: Sendable {
        /// The policy.
        public let policy: SecurityPolicy
        /// Its version in the store; 0 for the policy file (or demo policy) a node started with.
        public let version: Int64
        /// Its YAML source.
        let source: String
        /// Where it came from (a file's path, "demo policy", "stored policy version N").
        public let origin: String
        let confidentialClients: ConfidentialClients
        /// The secrets of the OpenID clients that have one, checked as confidential clients' are.
        let openIDSecrets: ConfidentialClients
        let registrationThrottle: RegistrationThrottle?
        /// Every origin some application allows (CORS), lowercased.
        let allowedOrigins: Set<String>
        /// Password checks and wrong answers per source address; `nil` when the policy turns it off.
        let sourceThrottle: SourceThrottle?
    }

    private let snapshot: Mutex<Snapshot>

    init(_ snapshot: Snapshot) {
        self.snapshot = Mutex(snapshot)
    }

    /// The snapshot in force now.
    public var current: Snapshot { snapshot.withLock { $0 } }

    /// Puts `next` in force unless a newer version is already (two appliers racing); `false` if it was older.
    @discardableResult
    func replace(with next: Snapshot) -> Bool {
        snapshot.withLock { current in
            guard next.version > current.version else { return false }
            current = next
            return true
        }
    }
}

/// Turns policy text into a ``PolicyInForce/Snapshot``: the same checks as at start, for the start itself, for
/// validation and for a policy applied live.
struct PolicyCompiler: Sendable {
    let store: any GatehouseStore
    let registry: SecurityCheckRegistry
    /// This node's name (for the lockout's audit of who locked an account).
    let node: String
    /// This node's view of the locked accounts, shared by every policy it compiles (refreshed by ``PolicyWatcher``).
    let knownLockouts: KnownLockouts
    /// This node's password checks per source address, shared by every policy it compiles (their counts survive a
    /// policy change).
    var sourceLanes = SourceLanes()
    /// Whether the node serves beyond this machine: then a policy that keeps the demo's published secrets (the demo
    /// policy itself included) is refused, whatever its origin — a file, the store, the admin API — and a confidential
    /// client's secret shorter than ``ConfidentialClients/strongSecretLength`` is refused at its first use.
    let servesBeyondLoopback: Bool
    /// Where a refused weak secret is said.
    var logger = Logger(label: "gatehouse")

    /// Compiles `yaml`; throws a ``PolicyError`` naming `file` and the key at fault.
    ///
    /// - Parameters:
    ///   - stored: the policy was applied before (the store's): a key it does not know is a warning rather than
    ///     a refusal, so that a policy stored before keys were checked still runs.
    func compile(yaml: String, file: String, version: Int64, stored: Bool = false) throws
        -> PolicyInForce.Snapshot
    {
        var warnings: [String] = []
        let decoded = try SecurityPolicy.decode(yaml: yaml, file: file) { unknown in
            guard stored else { throw unknown }
            warnings.append("\(unknown): ignored")
        }
        let lockouts = StoreAccountLockouts(
            store: store, policy: try SecurityPolicy.accountLockout(of: decoded, file: file), node: node, known: knownLockouts)
        let sourcePolicy = try SecurityPolicy.sourceThrottle(of: decoded, file: file)
        let sources = SourceThrottle(policy: sourcePolicy, lanes: sourceLanes) { [store, node, knownLockouts] counting in
            StoreAccountLockouts(store: store, policy: counting, node: node, known: knownLockouts)
        }
        let passwords = PasswordVerifier(lockouts: lockouts, decoyCost: SecurityPolicy.decoyCost(of: decoded), sources: sources)
        let policy = try SecurityPolicy.build(decoded, file: file, registry: registry,
                                              services: SecurityCheckServices(users: store, passwords: passwords, factors: store,
                                                                                oneTimeUses: Self.oneTimeUses(of: store)),
                                              warnings: warnings)
        let published = DemoPolicy.publishedCredentials(in: policy)
        if servesBeyondLoopback, !published.isEmpty {
            throw PolicyError(file: file, key: "", problem: "keeps the demo's published secrets (\(published.joined(separator: ", "))): "
                              + "give them hashes of your own (`gatehouse hash-password`) or remove them; they are accepted on a loopback host only")
        }
        let throttle = policy.registrationThrottle.map { settings in
            RegistrationThrottle(limit: settings.count, window: settings.window) { counting in
                StoreAccountLockouts(store: store, policy: counting, node: node, known: knownLockouts)
            }
        }
        return PolicyInForce.Snapshot(
            policy: policy, version: version, source: yaml, origin: file,
            confidentialClients: ConfidentialClients(
                policy.confidentialClients, passwords: passwords,
                minimumSecretLength: servesBeyondLoopback ? ConfidentialClients.strongSecretLength : nil,
                onWeakSecret: { [logger] id, length in
                    logger.error("Confidential client \(id) sent its right secret, refused: \(length) characters, fewer than \(ConfidentialClients.strongSecretLength) (anyone may try secrets, and a client is never locked by its id). Give it a new one: gatehouse hash-password --new-client-secret")
                }),
            openIDSecrets: ConfidentialClients(
                policy.openIDClients.values.compactMap { client in
                    client.secretHash.map { ConfidentialClient(id: client.id, displayName: client.displayName, secretHash: $0, allowedScope: []) }
                }, passwords: passwords, minimumSecretLength: servesBeyondLoopback ? ConfidentialClients.strongSecretLength : nil),
            registrationThrottle: throttle, allowedOrigins: policy.allowedOrigins, sourceThrottle: sources)
    }
}

extension PolicyCompiler {
    /// The store's record of used values (the one client assertions use), for checks' one-time values: the key is
    /// recorded by its SHA-256, never as it is (a user's name and a time step).
    static func oneTimeUses(of store: any GatehouseStore) -> OneTimeUses {
        OneTimeUses { key, expiresAt, now in
            try await store.consumeAssertion(digest: UsedAssertions.hex(UsedAssertions.digest(of: "once:" + key)), expiresAt: expiresAt, now: now)
        }
    }
}
