import GatehouseChecks
import GatehouseProtocol
import GatehouseStore
import Synchronization

/// What introspection tells about a token's client beyond the token itself — its device and its active user — kept
/// by a node for ``lifetime`` after a store read, so that a resource server introspecting a client's token at every
/// request costs no store read each time.
///
/// Whether the token is valid (expiry, revocation, retired key) is not kept here: it is checked at every
/// introspection. This node forgets a client at once when it stores a change of the client's state, registration or
/// active user (``forget(_:)``), so on one node an answer is never behind; a change made through another node shows
/// here at most ``lifetime`` late (a device's new display name, another active user).
final class IntrospectedClients: Sendable {
    /// A client as introspection answers it.
    struct Client: Sendable {
        /// The `mfp-device` member.
        let device: JSON
        /// The client's active user, answered as `mfp-user` for a token of that user.
        let activeUser: AuthenticatedUser?
        /// Whether the client's device refuses its application (``DeviceRefusal``): its tokens are answered inactive.
        var blocked = false
    }

    private struct State {
        var entries: ExpiringEntries<String, Client, Int64>
        /// How many times the clients of each bucket (by the hash of their id) were forgotten: a read that a
        /// forget of its client overtook is not kept (it may hold what the forget was about).
        var forgets = [UInt64](repeating: 0, count: IntrospectedClients.buckets)
    }

    /// How long a client read from the store is answered from memory, ms.
    let lifetime: Int64
    private static let buckets = 256
    private let state: Mutex<State>

    /// At most `capacity` clients (all forgotten when it is reached), each for `lifetime` ms.
    init(capacity: Int = 10_000, lifetime: Int64 = 2000) {
        self.lifetime = lifetime
        state = Mutex(State(entries: ExpiringEntries(capacity: capacity, overflow: .forgetAll)))
    }

    private static func bucket(_ clientID: String) -> Int { Int(UInt(bitPattern: clientID.hashValue) % UInt(buckets)) }

    /// The client `clientID` as read by `read` within the last ``lifetime``, or read now (an unknown client, `nil`,
    /// is not kept, nor is a read during which the client was forgotten).
    func client(_ clientID: String, now: Int64, read: () async throws -> Client?) async throws -> Client? {
        let bucket = Self.bucket(clientID)
        let (known, forgets) = state.withLock { ($0.entries.value(for: clientID, now: now), $0.forgets[bucket]) }
        if let known { return known }
        guard let client = try await read() else { return nil }
        state.withLock { state in
            if state.forgets[bucket] == forgets { _ = state.entries.insert(client, for: clientID, expires: now + lifetime, now: now) }
        }
        return client
    }

    /// The client `clientID` if it was read within the last ``lifetime``, for a request answered on the event loop
    /// (which reads nothing); `nil` when it must be read.
    func remembered(_ clientID: String, now: Int64) -> Client? {
        state.withLock { $0.entries.value(for: clientID, now: now) }
    }

    /// Forgets `clientID`: this node changed what introspection answers about it. A read of it under way now is not
    /// kept either.
    func forget(_ clientID: String) {
        let bucket = Self.bucket(clientID)
        state.withLock { state in
            state.entries.remove(clientID)
            state.forgets[bucket] &+= 1
        }
    }
}
