import GatehouseProtocol
import Foundation
import GatehouseStore
import Synchronization

/// The revocations this node knows, in memory for the resource hot path, written through to the store.
///
/// A token is revoked when its `jti` is, or when one of the checks that granted it stopped granting its client
/// (logout, block) after the token was issued.
///
/// Several nodes: revocations recorded by another node reach this one by polling. Once ``load(since:)`` has run,
/// a background task reads the store every ``pollInterval`` (one indexed range query on `revoked_at`), so the hot
/// path (``isRevoked(_:)``) stays an in-memory lookup and a revocation made on any node holds on every node within
/// about a poll interval. Each poll re-reads the last ``overlap`` before the previous poll, which covers clock skew
/// between nodes and revocations committed a while after their `revokedAt` (the time of the round that caused
/// them); applying a revocation twice changes nothing. Entries older than the window given to ``load(since:)``
/// (the longest token lifetime) are forgotten: no token they could revoke is still valid.
final class RevocationList: Sendable {
    struct Entries {
        var grants: [String: [String: Int64]] = [:]  // clientID → check → revokedAt
        var tokens: [String: Int64] = [:]  // jti → revokedAt
        /// The epoch ms at which the last successful read of the store started.
        var lastRead: Int64 = 0
        /// How long a revocation matters, ms.
        var window: Int64 = 0
        var lastPrune: Int64 = 0
    }

    /// How often the store is polled for other nodes' revocations.
    static let pollInterval: Duration = .seconds(1)
    /// How far before the previous poll each poll reads again, ms.
    static let overlap: Int64 = 30_000

    let entries = Mutex(Entries())
    private let store: any RevocationStore
    private let interval: Duration
    private let poller = Mutex<Task<Void, Never>?>(nil)

    init(store: any RevocationStore, pollInterval: Duration = RevocationList.pollInterval) {
        self.store = store
        self.interval = pollInterval
    }

    deinit {
        poller.withLock { $0?.cancel() }
    }

    /// Loads the revocations recorded since `since` (epoch ms: now minus the longest token lifetime) from the
    /// store, and starts following the store.
    func load(since: Int64) async throws {
        let started = EpochTime.nowMillis()
        apply(try await store.revocations(since: since))
        entries.withLock { entries in
            entries.lastRead = max(entries.lastRead, started)
            entries.window = max(entries.window, started - since)
            entries.lastPrune = started
        }
        startPolling()
    }

    /// Reads the revocations recorded since shortly before the previous read.
    func poll() async throws {
        let started = EpochTime.nowMillis()
        let since = entries.withLock { $0.lastRead } - Self.overlap
        apply(try await store.revocations(since: since))
        entries.withLock { entries in
            entries.lastRead = max(entries.lastRead, started)
            if entries.window > 0, started - entries.lastPrune > 60_000 {
                let horizon = started - entries.window - Self.overlap
                entries.tokens = entries.tokens.filter { $0.value >= horizon }
                entries.grants = entries.grants.compactMapValues { byCheck in
                    let kept = byCheck.filter { $0.value >= horizon }
                    return kept.isEmpty ? nil : kept
                }
                entries.lastPrune = started
            }
        }
    }

    private func startPolling() {
        let interval = self.interval
        poller.withLock { poller in
            guard poller == nil else { return }
            poller = Task.detached { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    guard let list = self else { return }
                    // A failed read (the store briefly unreachable) is retried at the next tick from the same point.
                    try? await list.poll()
                }
            }
        }
    }

    /// Records revocations, in the store first.
    func add(_ records: [RevocationRecord]) async throws {
        for record in records { try await store.insertRevocation(record) }
        apply(records)
    }

    private func apply(_ records: [RevocationRecord]) {
        guard !records.isEmpty else { return }
        entries.withLock { entries in
            for record in records {
                switch record.subject {
                case .grant(let clientID, let check):
                    entries.grants[clientID, default: [:]][check] = max(entries.grants[clientID]?[check] ?? 0, record.revokedAt)
                case .token(let jti):
                    entries.tokens[jti] = max(entries.tokens[jti] ?? 0, record.revokedAt)
                }
            }
        }
    }

    /// Whether a token with these claims has been revoked.
    func isRevoked(_ claims: AccessTokenClaims) -> Bool {
        entries.withLock { entries in
            // Both usually empty: no key is hashed then (this runs for every protected request).
            if !entries.tokens.isEmpty, entries.tokens[claims.jti] != nil { return true }
            guard !entries.grants.isEmpty, let byCheck = entries.grants[claims.client_id] else { return false }
            return claims.checks.contains { check in byCheck[check].map { claims.iat_ms <= $0 } ?? false }
        }
    }

}

extension RevocationList {
    /// Whether `jti` (a token, or anything revoked under a `jti` of its own: an OpenID refresh-token family) was revoked.
    func isRevoked(jti: String) -> Bool {
        entries.withLock { !$0.tokens.isEmpty && $0.tokens[jti] != nil }
    }
}
