/// A relayed WebSocket's two sides as ``WebSocketBridge`` lives them: which side's connection is open, the upstream's
/// connection (connecting, relaying, ended), the close handshake end to end (to which side a close was sent), and when
/// the bridge is done. Events in, decisions out — no socket, no frame — tested alone
/// (`WebSocketBridgeStateMachineTests`); the bridge writes the frames and closes the connections. The credentials'
/// deadline is ``WebSocketCredentialsStateMachine``'s.
///
/// ```
///  upstream:  idle ──client attached──▶ connecting ──101──▶ relaying
///                                          │ refused, unreachable, the client gone: ended (the client closed 1011)
///  close handshake, from either side:
///    close from A, B open ──▶ relayed to B ──B's close──▶ relayed to A, both closed
///    close from A, B gone ──▶ answered by the bridge (the code echoed), A closed
///  finished: both sides' connections closed (counted once)
/// ```
struct WebSocketBridgeStateMachine {
    typealias Side = WebSocketBridge.Side

    enum Upstream: Equatable {
        /// Not asked for yet: no client.
        case idle
        /// Its connection and upgrade are under way; the client's frames wait.
        case connecting
        /// Upgraded: frames flow both ways.
        case relaying
        /// Refused or unreachable, or no longer wanted.
        case ended
    }

    /// What a side's handler in place asks for.
    enum Attached: Equatable {
        /// The client's side, first: start (count the WebSocket, set the deadline, connect upstream).
        case start
        /// An upstream side that is no longer wanted (the client left, or the bridge finished): close it.
        case closeIt
        case none
    }

    /// What a side's connection closing asks for.
    enum SideClosed: Equatable {
        /// Send the other side a close (1000): the relay ends.
        case closeOther
        /// The client left while the upstream connection was being made: drop that connection.
        case dropUpstreamConnection
        case none
    }

    /// What a frame from a side may do now.
    enum Arrival: Equatable {
        /// Relay it (or read it as a close).
        case relay
        /// Keep it until the upstream is ready (a client's frame while connecting).
        case hold
        /// Drop it: the bridge is done.
        case drop
    }

    /// What a close frame from a side asks for.
    enum CloseReceived: Equatable {
        /// The answer to the close this side was sent: its handshake is complete, this side's connection closes.
        /// `relayToOther`: the other side started it and waits for this answer (written to it, then it closes too).
        case answered(relayToOther: Bool)
        /// This side starts the handshake: the close goes to the other side, which answers through the bridge.
        case relayToOther
        /// Nobody to relay it to: the bridge answers it itself (the code echoed) and closes this side.
        case answerItself
    }

    private(set) var upstream = Upstream.idle
    /// The sides whose connection is open (their handler attached, not yet closed).
    private(set) var open = WebSocketBridge.Sides()
    /// The sides a close frame was written to.
    private(set) var closeSent = WebSocketBridge.Sides()
    /// The WebSocket was counted as opened.
    private(set) var started = false
    /// Both sides' connections closed: nothing more happens.
    private(set) var finished = false

    /// A side's handler is in its pipeline.
    mutating func attached(_ side: Side) -> Attached {
        open.insert(side)
        if side == .client {
            guard !started else { return .none }
            started = true
            upstream = .connecting
            return .start
        }
        return finished || !open.contains(.client) ? .closeIt : .none
    }

    /// The upstream's upgrade completed: `true` when the client's frames flow now; `false`: close the upstream side
    /// (the client left meanwhile).
    mutating func upstreamReady() -> Bool {
        let flows = !finished && open.contains(.client) && open.contains(.upstream)
        upstream = flows ? .relaying : .ended
        return flows
    }

    /// The upstream could not be reached or refused the upgrade: `true` when the client is to be closed (1011).
    mutating func upstreamFailed() -> Bool {
        guard upstream == .connecting, !finished else { return false }
        upstream = .ended
        return true
    }

    /// A side's connection closed.
    mutating func closed(_ side: Side) -> SideClosed {
        open.remove(side)
        if open.contains(side.other) { return .closeOther }
        if side == .client, upstream == .connecting { return .dropUpstreamConnection }
        return .none
    }

    /// Whether the bridge is done now (every side closed), once: then whether it was counted as opened and whether an
    /// upstream connection under way is to be dropped.
    mutating func finish() -> (counted: Bool, dropUpstreamConnection: Bool)? {
        guard !finished, open.isEmpty else { return nil }
        finished = true
        return (started, upstream == .connecting)
    }

    func arrival(from side: Side) -> Arrival {
        if finished { return .drop }
        if side == .client, upstream != .relaying { return .hold }
        return .relay
    }

    /// Whether a frame may be written to `side`: its connection is open and no close went to it.
    func mayWrite(to side: Side) -> Bool { open.contains(side) && !closeSent.contains(side) }

    /// A close frame is to go to `side`: `true` when it is written now (recorded), `false` when it cannot go (the side
    /// is gone, or had its close).
    mutating func sendClose(to side: Side) -> Bool {
        guard mayWrite(to: side) else { return false }
        closeSent.insert(side)
        return true
    }

    /// A close frame came from `side`.
    mutating func closeReceived(from side: Side) -> CloseReceived {
        let other = side.other
        if closeSent.contains(side) {
            guard mayWrite(to: other) else { return .answered(relayToOther: false) }
            closeSent.insert(other)
            return .answered(relayToOther: true)
        }
        if mayWrite(to: other) {
            closeSent.insert(other)
            return .relayToOther
        }
        closeSent.insert(side)
        return .answerItself
    }
}
