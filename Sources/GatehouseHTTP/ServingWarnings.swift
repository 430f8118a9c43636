import GatehouseProtocol

/// What an operator is told at start about how a server is exposed.
package enum ServingWarnings {
    /// Whether `host` (a listen address) is reachable only from this machine.
    package static func isLoopback(_ host: String) -> Bool { LoopbackHost.contains(host) }
}
