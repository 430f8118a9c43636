import Crypto
import Foundation
import Synchronization

/// Client assertions already accepted by this node, until they expire: an assertion works once, so one caught on
/// the way (a log, a proxy) cannot be replayed for a logout, a revocation or a registration read.
///
/// MobileFirst clients sign a new assertion for every request (its `iat` is in milliseconds), so a legitimate
/// client never sends the same one twice. Kept in memory (SHA-256 of the assertion → expiry), bounded.
final class UsedAssertions: Sendable {
    private let used = Mutex<[SHA256.Digest: Int64]>([:])
    /// The most assertions remembered; the expired ones are dropped first.
    let capacity: Int

    init(capacity: Int = 200_000) {
        self.capacity = capacity
    }

    /// Records `assertion` as used until `expiresAt` (epoch ms); `false` when it was used already (or when the
    /// memory is full of unexpired assertions, failing closed).
    func consume(_ assertion: String, expiresAt: Int64, now: Int64) -> Bool {
        let digest = SHA256.hash(data: Data(assertion.utf8))
        return used.withLock { used in
            if let until = used[digest], until >= now { return false }
            if used.count >= capacity {
                used = used.filter { $0.value >= now }
                if used.count >= capacity { return false }
            }
            used[digest] = expiresAt
            return true
        }
    }
}
