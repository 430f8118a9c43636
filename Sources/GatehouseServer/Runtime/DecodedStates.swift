import Foundation
import GatehouseProtocol
import Synchronization

/// Client states decoded from their stored JSON, by their exact bytes: a state that has not changed since this node
/// last read it (a successful client's rounds, the introspections of its token) is decoded once, not at every
/// request. A value is only ever found for the very bytes (and type) it was decoded from, so what a request sees is
/// what decoding would give; nothing is remembered at encoding, since a type's decoding need not give back exactly
/// what was encoded. At most `capacity` entries, all forgotten when it is reached: a stream of new clients costs
/// one decoding each, as it would without this.
final class DecodedStates: Sendable {
    private struct Key: Hashable, Sendable {
        let type: ObjectIdentifier
        let bytes: [UInt8]
    }

    private let entries = Mutex<[Key: any Sendable]>([:])
    let capacity: Int

    /// The node's: 10,000 states of a few hundred bytes each at most.
    static let shared = DecodedStates(capacity: 10_000)

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The value of `bytes`, decoded now or earlier.
    func decode<T: Decodable & Sendable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let key = Key(type: ObjectIdentifier(type), bytes: bytes)
        if let found = entries.withLock({ $0[key] }) as? T { return found }
        // By hand for the types that read their own JSON (the built-in checks' states, the client context).
        let value = try SharedJSONCoders.decode(T.self, from: bytes)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = value
        }
        return value
    }

    /// How many values are remembered now.
    var count: Int { entries.withLock { $0.count } }
}
