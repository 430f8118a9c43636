extension WebSocketBridge {
    /// A set of sides as two bits: a `Set<Side>` hashes its member at every call, and the bridge asks several
    /// times a frame.
    struct Sides {
        private var bits: UInt8 = 0

        private static func bit(_ side: Side) -> UInt8 { side == .client ? 1 : 2 }

        var isEmpty: Bool { bits == 0 }

        func contains(_ side: Side) -> Bool { bits & Self.bit(side) != 0 }

        mutating func insert(_ side: Side) { bits |= Self.bit(side) }

        /// Removes `side`; whether it was there.
        @discardableResult
        mutating func remove(_ side: Side) -> Bool {
            let was = contains(side)
            bits &= ~Self.bit(side)
            return was
        }
    }

    /// Each side's handler, in two stored properties rather than a dictionary (no hashing per frame).
    struct SideHandlers {
        private var client: (any WebSocketBridgeSide)?
        private var upstream: (any WebSocketBridgeSide)?

        subscript(side: Side) -> (any WebSocketBridgeSide)? {
            get { side == .client ? client : upstream }
            set {
                if side == .client { client = newValue } else { upstream = newValue }
            }
        }
    }
}

/// The frames a ``WebSocketBridge`` relayed each way, written as they came or re-encoded; counted on the event loop
/// and added to ``GatewayStatistics`` when the connection ends.
struct RelayedFrames {
    var toUpstreamAsReceived = 0
    var toUpstreamReencoded = 0
    var toClientAsReceived = 0
    var toClientReencoded = 0

    mutating func count(to side: WebSocketBridge.Side, asReceived: Bool) {
        switch (side, asReceived) {
        case (.upstream, true): toUpstreamAsReceived += 1
        case (.upstream, false): toUpstreamReencoded += 1
        case (.client, true): toClientAsReceived += 1
        case (.client, false): toClientReencoded += 1
        }
    }
}
