import GatehouseProtocol
import Foundation
import GatehouseChecks
import GatehouseStore
import Logging
import NIOPosix
public import ServiceLifecycle

/// Keeps a node on the newest policy of the store: applies a policy an operator sends (``apply(yaml:actor:)``),
/// and polls the store for policies other nodes applied (and for the locked accounts, ``KnownLockouts``). A policy is compiled before it is put in force, so a
/// policy this node cannot run (a check class it lacks) leaves the one in force running and is logged.
public struct PolicyWatcher: Service {
    let policies: PolicyInForce
    let compiler: PolicyCompiler
    /// How often the store is asked for a newer policy.
    let interval: Duration
    let logger: Logger

    var store: any GatehouseStore { compiler.store }

    /// Why a policy was not applied.
    enum ApplyError: Error {
        /// It does not compile.
        case invalid(PolicyError)
        /// Another operator applied a policy at the same time; read the policy again and retry.
        case conflict
    }

    /// Checks `yaml` as at start, stores it as the next version and puts it in force on this node (the other
    /// nodes follow within ``interval``). Returns the snapshot now in force.
    func apply(yaml: String, actor: String) async throws -> PolicyInForce.Snapshot {
        let version = max(try await store.latestPolicyVersion(), policies.current.version) + 1
        let snapshot: PolicyInForce.Snapshot
        do {
            snapshot = try await compile(yaml: yaml, file: "policy.yaml", version: version)
        } catch let error as PolicyError {
            throw ApplyError.invalid(error)
        }
        do {
            try await store.insertPolicy(StoredPolicy(version: version, yaml: yaml, appliedAt: EpochTime.nowMillis(), actor: actor))
        } catch StoreError.duplicate {
            throw ApplyError.conflict
        }
        try await putInForce(snapshot)
        return snapshot
    }

    /// Puts the store's newest policy in force if it is newer than this node's.
    func catchUp() async throws {
        guard try await store.latestPolicyVersion() > policies.current.version, let stored = try await store.latestPolicy() else { return }
        let snapshot: PolicyInForce.Snapshot
        do {
            snapshot = try await compile(yaml: stored.yaml, file: "stored policy version \(stored.version)", version: stored.version)
        } catch let error as PolicyError {
            logger.error("The policy version \(stored.version) applied by \(stored.actor) cannot run on this node; keeping version \(policies.current.version): \(error)")
            // Not tried again until a newer version is stored.
            try await putInForce(policies.current.withVersion(stored.version))
            return
        }
        try await putInForce(snapshot)
    }

    /// Compiles on the password-hashing threads: the first policy of a cost makes the decoy password hash, a bcrypt.
    private func compile(yaml: String, file: String, version: Int64) async throws -> PolicyInForce.Snapshot {
        try await PasswordVerifier.hashingThreads.runIfActive { [compiler] in
            try compiler.compile(yaml: yaml, file: file, version: version, stored: true)
        }
    }

    private func putInForce(_ snapshot: PolicyInForce.Snapshot) async throws {
        for user in snapshot.policy.users { try await store.upsertUser(user) }
        if policies.replace(with: snapshot) {
            for warning in snapshot.policy.warnings { logger.warning("\(warning)") }
            logger.notice("Policy version \(snapshot.version) in force (\(snapshot.origin))")
        }
    }

    /// Polls the store until the service group shuts down. A failed poll (the store unreachable) is logged and
    /// tried again at the next interval.
    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                do {
                    try await catchUp()
                    try await compiler.knownLockouts.refresh(from: store, now: EpochTime.nowMillis())
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning("Could not read the newest policy and the locked accounts from the store (\(type(of: error))); trying again in \(interval)")
                }
            }
        }
    }
}

extension PolicyInForce.Snapshot {
    /// The same policy, labelled with another version (a stored version this node skips).
    func withVersion(_ version: Int64) -> Self {
        .init(policy: policy, version: version, source: source, origin: origin, confidentialClients: confidentialClients, openIDSecrets: openIDSecrets,
              registrationThrottle: registrationThrottle, allowedOrigins: allowedOrigins, sourceThrottle: sourceThrottle)
    }
}
