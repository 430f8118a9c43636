import GatehouseProtocol

/// What scope each resource needs, learnt from its `insufficient_scope` answers: an LRU of 100 entries keyed
/// by `"<url>_<METHOD>"` (as MobileFirst's `WLAuthorizationManager`), so that the next request sends the right token up front.
final class ResourceScopeCache: Sendable {
    /// How many resources are remembered.
    static let capacity = 100

    private struct State {
        var scopes: [String: String] = [:]
        /// Least recently used first.
        var order: [String] = []
    }
    private let state = Locked(State())

    static func key(url: String, method: String) -> String { "\(url)_\(method.uppercased())" }

    func scope(for key: String) -> String? {
        state.withLock { state in
            guard let scope = state.scopes[key] else { return nil }
            state.order.removeAll { $0 == key }
            state.order.append(key)
            return scope
        }
    }

    func set(_ scope: String, for key: String) {
        state.withLock { state in
            if state.scopes.updateValue(scope, forKey: key) != nil {
                state.order.removeAll { $0 == key }
            }
            state.order.append(key)
            while state.order.count > Self.capacity {
                state.scopes[state.order.removeFirst()] = nil
            }
        }
    }

    func remove(_ key: String) {
        state.withLock { state in
            state.scopes[key] = nil
            state.order.removeAll { $0 == key }
        }
    }

    var count: Int { state.withLock { $0.scopes.count } }
}
