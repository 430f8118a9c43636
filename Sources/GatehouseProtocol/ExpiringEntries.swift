/// Entries that expire, at most `capacity` of them: the one eviction rule of Gatehouse's in-memory caches (verified
/// tokens on the server and in resource servers, verified passwords in the gateway, used client assertions).
///
/// When a new entry finds the memory full, the expired entries are dropped first; if it is still full, the cache
/// either forgets everything (``Overflow/forgetAll``: a cache of work that can be done again) or refuses the new
/// entry (``Overflow/refuse``: a memory that must fail closed, such as replay protection). A value type: keep it
/// inside a lock (`Mutex` on the server, `Locked` in what apps compile).
///
/// Not a wire format: it lives here because every part (server, gateway, resource server) shares this module.
package struct ExpiringEntries<Key: Hashable, Value, Instant: Comparable> {
    /// What a full cache does with a new entry once the expired ones are gone.
    package enum Overflow: Sendable {
        /// Forget every entry and keep the new one.
        case forgetAll
        /// Keep the entries and refuse the new one.
        case refuse
    }

    /// The most entries kept.
    package let capacity: Int
    package let overflow: Overflow
    private var entries: [Key: (value: Value, expires: Instant)] = [:]

    package init(capacity: Int, overflow: Overflow) {
        self.capacity = capacity
        self.overflow = overflow
    }

    /// How many entries are kept now (expired ones included, until evicted).
    package var count: Int { entries.count }

    /// The value of `key` if it has not expired at `now`; an expired entry is removed.
    package mutating func value(for key: Key, now: Instant) -> Value? {
        entry(for: key, now: now)?.value
    }

    /// The value of `key` and when it expires, if it has not expired at `now`; an expired entry is removed.
    package mutating func entry(for key: Key, now: Instant) -> (value: Value, expires: Instant)? {
        guard let entry = entries[key] else { return nil }
        guard entry.expires > now else {
            entries[key] = nil
            return nil
        }
        return entry
    }

    /// Keeps `value` for `key` until `expires`; `false` when a full cache refused it.
    @discardableResult
    package mutating func insert(_ value: Value, for key: Key, expires: Instant, now: Instant) -> Bool {
        if entries[key] == nil, entries.count >= capacity {
            entries = entries.filter { $0.value.expires > now }
            if entries.count >= capacity {
                switch overflow {
                case .forgetAll: entries.removeAll(keepingCapacity: true)
                case .refuse: return false
                }
            }
        }
        entries[key] = (value, expires)
        return true
    }

    /// Forgets `key`.
    package mutating func remove(_ key: Key) { entries[key] = nil }
}

extension ExpiringEntries: Sendable where Key: Sendable, Value: Sendable, Instant: Sendable {}
