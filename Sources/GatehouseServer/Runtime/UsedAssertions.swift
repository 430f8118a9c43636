import Crypto
import Foundation
import GatehouseProtocol
import Synchronization

/// Client assertions already accepted by this node, until they expire: an assertion works once, so one caught on
/// the way (a log, a proxy) cannot be replayed for a logout, a revocation or a registration read.
///
/// MobileFirst clients sign a new assertion for every request (its `iat` is in milliseconds), so a legitimate
/// client never sends the same one twice. Kept in memory (SHA-256 of the assertion → expiry), bounded: the first
/// filter, before the store's record that every node shares (``ClientAssertionVerifier``).
final class UsedAssertions: Sendable {
    /// At most `capacity` assertions, the expired ones dropped first; a full memory refuses (fails closed).
    private let used: Mutex<ExpiringEntries<SHA256.Digest, Void, Int64>>

    init(capacity: Int = 200_000) {
        used = Mutex(ExpiringEntries(capacity: capacity, overflow: .refuse))
    }

    /// The SHA-256 of an assertion: how this memory and the store (``hex(_:)``) record it, never the assertion itself.
    static func digest(of assertion: String) -> SHA256.Digest {
        SHA256.hash(data: Data(assertion.utf8))
    }

    /// A digest as the store records it.
    static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }

    /// Records the assertion of `digest` as used until `expiresAt` (epoch ms); `false` when it was used already (or when the
    /// memory is full of unexpired assertions, failing closed).
    func consume(_ digest: SHA256.Digest, expiresAt: Int64, now: Int64) -> Bool {
        used.withLock { used in
            // Used until its expiry, inclusive.
            if used.value(for: digest, now: now - 1) != nil { return false }
            return used.insert((), for: digest, expires: expiresAt, now: now - 1)
        }
    }
}
