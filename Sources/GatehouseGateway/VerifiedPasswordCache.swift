import Crypto
import Foundation
import GatehouseProtocol
import Synchronization

/// Remembers, for a short time, which user name and password pairs a ``UsersLoginModule`` has verified, so that
/// a client sending `Basic` credentials with every request costs one bcrypt verification per `lifetime`, not one
/// per request.
///
/// Only an HMAC-SHA-256 of the pair under a key made at random for this process is kept, never the password, and
/// only successes are kept (a wrong password is verified with bcrypt every time). At most `capacity` entries:
/// when full, expired entries are dropped, and then all of them.
final class VerifiedPasswordCache: Sendable {
    private let key = SymmetricKey(size: .bits256)
    /// The HMAC with its key already absorbed, copied for each fingerprint.
    private let keyed: HMAC<SHA256>
    private let lifetime: Duration
    private let entries: Mutex<ExpiringEntries<Data, Subject, ContinuousClock.Instant>>

    init(lifetime: Duration, capacity: Int = 10_000) {
        self.lifetime = lifetime
        keyed = HMAC<SHA256>(key: key)
        entries = Mutex(ExpiringEntries(capacity: capacity, overflow: .forgetAll))
    }

    private func fingerprint(_ username: String, _ password: String) -> Data {
        var message: [UInt8] = []
        message.reserveCapacity(username.utf8.count + password.utf8.count + 1)
        message.append(contentsOf: username.utf8)
        message.append(0)
        message.append(contentsOf: password.utf8)
        var hmac = keyed
        hmac.update(data: message)
        return Data(hmac.finalize())
    }

    /// The subject of a pair verified less than `lifetime` ago.
    func subject(username: String, password: String) -> Subject? {
        let fingerprint = fingerprint(username, password)
        let now = ContinuousClock.now
        return entries.withLock { $0.value(for: fingerprint, now: now) }
    }

    /// Remembers a pair that bcrypt has just verified.
    func remember(username: String, password: String, subject: Subject) {
        let fingerprint = fingerprint(username, password)
        let now = ContinuousClock.now
        _ = entries.withLock { $0.insert(subject, for: fingerprint, expires: now.advanced(by: lifetime), now: now) }
    }
}
