import GatehouseProtocol

/// A ``KeyStore`` in memory: the registration lasts as long as the store. For tests and short-lived tools only: an
/// app that forgets its registration at every launch registers again each time, and the server's attempt counters
/// and remember-me, which follow the client, start afresh.
public final class InMemoryKeyStore: KeyStore {
    private let stored: Locked<StoredRegistration?>

    /// A store holding `registration` (empty by default).
    public init(_ registration: StoredRegistration? = nil) {
        stored = Locked(registration)
    }

    /// What the store holds now.
    public var current: StoredRegistration? { stored.withLock { $0 } }

    /// What the store holds.
    public func load() async throws -> StoredRegistration? { current }

    /// Replaces what the store holds.
    public func save(_ registration: StoredRegistration) async throws { stored.withLock { $0 = registration } }

    /// Empties the store.
    public func delete() async throws { stored.withLock { $0 = nil } }
}
