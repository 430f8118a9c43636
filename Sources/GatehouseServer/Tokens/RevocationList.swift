import GatehouseStore
import Synchronization

/// The revocations this node knows, in memory for the resource hot path, written through to the store.
///
/// A token is revoked when its `jti` is, or when one of the checks that granted it stopped granting its client
/// (logout, block) after the token was issued.
final class RevocationList: Sendable {
    private struct Entries {
        var grants: [String: [String: Int64]] = [:]  // clientID → check → revokedAt
        var tokens: Set<String> = []
    }

    private let entries = Mutex(Entries())
    private let store: any GatehouseStore

    init(store: any GatehouseStore) {
        self.store = store
    }

    /// Loads the revocations of the last `window` ms from the store.
    func load(since: Int64) async throws {
        apply(try await store.revocations(since: since))
    }

    /// Records revocations, in the store first.
    func add(_ records: [RevocationRecord]) async throws {
        for record in records { try await store.insertRevocation(record) }
        apply(records)
    }

    private func apply(_ records: [RevocationRecord]) {
        entries.withLock { entries in
            for record in records {
                switch record.subject {
                case .grant(let clientID, let check):
                    entries.grants[clientID, default: [:]][check] = max(entries.grants[clientID]?[check] ?? 0, record.revokedAt)
                case .token(let jti):
                    entries.tokens.insert(jti)
                }
            }
        }
    }

    /// Whether a token with these claims has been revoked.
    func isRevoked(_ claims: AccessTokenClaims) -> Bool {
        entries.withLock { entries in
            if entries.tokens.contains(claims.jti.value) { return true }
            guard let byCheck = entries.grants[claims.client_id] else { return false }
            return claims.checks.contains { check in byCheck[check].map { claims.iat_ms <= $0 } ?? false }
        }
    }
}
