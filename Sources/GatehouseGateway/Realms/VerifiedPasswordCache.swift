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
    private let entries: Mutex<ExpiringEntries<Fingerprint, Subject, ContinuousClock.Instant>>

    /// An HMAC-SHA-256, held inline: hashed and compared without an allocation.
    struct Fingerprint: Hashable {
        let words: (UInt64, UInt64, UInt64, UInt64)

        static func == (lhs: Fingerprint, rhs: Fingerprint) -> Bool {
            lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
        }

        func hash(into hasher: inout Hasher) {
            // Already uniform: one word is enough to spread the entries.
            hasher.combine(words.0)
        }
    }

    init(lifetime: Duration, capacity: Int = 10_000) {
        self.lifetime = lifetime
        keyed = HMAC<SHA256>(key: key)
        entries = Mutex(ExpiringEntries(capacity: capacity, overflow: .forgetAll))
    }

    private func fingerprint(_ username: String, _ password: String) -> Fingerprint {
        var hmac = keyed
        // `username`, a zero byte and `password`, in one buffer: one update of the HMAC.
        let count = username.utf8.count + 1 + password.utf8.count
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { message in
            var end = message.initialize(fromContentsOf: username.utf8)
            message[end] = 0
            end += 1
            end = message[end...].initialize(fromContentsOf: password.utf8)
            hmac.update(data: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: message[..<end])))
            message.deinitialize()
        }
        return hmac.finalize().withUnsafeBytes { bytes in
            Fingerprint(words: (bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                                bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
        }
    }

    /// The subject of a pair verified less than `lifetime` ago.
    func subject(username: String, password: String) -> Subject? {
        entry(username: username, password: password)?.subject
    }

    /// The subject of a pair verified less than `lifetime` ago, and when that will be `lifetime` ago.
    func entry(username: String, password: String) -> (subject: Subject, expires: ContinuousClock.Instant)? {
        let fingerprint = fingerprint(username, password)
        let now = ContinuousClock.now
        return entries.withLock { $0.entry(for: fingerprint, now: now) }.map { ($0.value, $0.expires) }
    }

    /// Remembers a pair that bcrypt has just verified.
    func remember(username: String, password: String, subject: Subject) {
        let fingerprint = fingerprint(username, password)
        let now = ContinuousClock.now
        _ = entries.withLock { $0.insert(subject, for: fingerprint, expires: now.advanced(by: lifetime), now: now) }
    }
}
