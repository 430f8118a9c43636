import NIOCore

/// A gateway connection's life, as ``GatewayHTTPHandler`` lives it: whether it still serves HTTP, is switching to a
/// WebSocket, was handed over or is closing; graceful shutdown; and its timers — the head timeout (the first head from
/// the connection's opening, a later one from its first byte) and the idle timeout (between requests, or while a
/// request's body stalls). Events in, decisions out, in the manner of async-http-client's `HTTP1ConnectionStateMachine`:
/// no socket, no timer, no clock of its own (every event brings `now`), so it is tested alone
/// (`GatewayConnectionStateMachineTests`); the handler carries the decisions out. An exchange's own progress
/// (deciding, connecting, relaying, answered) is ``GatewayHTTPHandler/Exchange/Phase``.
///
/// ```
///            head read (keep-alive unless quiescing)      answer's end, keep-alive
///  serving ─────────────────────────────────────▶ serving ──────────────────────▶ serving (next head)
///     │ 101 accepted          │ malformed, 408, idle, an answer with close, input closed when idle, quiesce when idle
///     ▼                       ▼
///  upgrading ──▶ handedOver  closing
/// ```
struct GatewayConnectionStateMachine {
    enum State: Equatable {
        /// Reading requests and answering them.
        case serving
        /// A `101` was written: what the client sends is kept for the handlers that take over.
        case upgrading
        /// Another handler serves the connection (a WebSocket bridge, KAAZING's handshake, an emulated WebSocket's
        /// downstream); this one only passes on what still reaches it.
        case handedOver
        /// Closing or closed: nothing more is read or answered.
        case closing
    }

    /// Where the connection's exchange is, for the timers and the client's end of input.
    enum ExchangeProgress: Equatable {
        /// None: between requests.
        case none
        /// The request's body is still arriving (`held`: while admission or an upstream connection is awaited, the
        /// client's reads are held, so its silence is not idleness).
        case readingBody(held: Bool)
        /// The request is read whole; its answer is awaited or under way (the upstream's read timeout governs).
        case requestRead
    }

    /// What a timer that fired asks for.
    enum TimerDecision: Equatable {
        /// Nothing: the connection is no longer this handler's to time.
        case none
        /// Look again at this deadline.
        case reschedule(NIODeadline)
        /// `408` and close: a head did not arrive whole in time.
        case headTimedOut
        /// Close: nothing was read for the idle timeout.
        case closeIdle
    }

    /// What the client's end of input (a half-close) asks for.
    enum InputClosedDecision: Equatable {
        /// Close now: no exchange is under way.
        case close
        /// Answer the request under way, then close.
        case lastExchange
        /// The body was cut short: the client's fault (`400` if nothing was answered yet).
        case bodyCutShort
    }

    private(set) var state = State.serving
    /// Graceful shutdown was asked for: the exchange under way is the last.
    private(set) var quiescing = false
    /// The requests whose heads were read.
    private(set) var requests = 0
    /// When the head being read began to arrive, while it is incomplete (the connection's opening for the first): a
    /// head dribbled a byte at a time must not keep the idle timer from ever firing.
    private(set) var headStarted: NIODeadline?
    /// The last read from the client, or the end of the last answer: the idle timeout counts from it.
    private(set) var lastActivity: NIODeadline
    let idleTimeout: TimeAmount
    let headTimeout: TimeAmount

    init(idleTimeout: TimeAmount, headTimeout: TimeAmount, now: NIODeadline) {
        self.idleTimeout = idleTimeout
        self.headTimeout = headTimeout
        lastActivity = now
    }

    var isServing: Bool { state == .serving }

    // MARK: Events

    /// The connection is open: the first head is due `headTimeout` from now (`nil`: already timed).
    mutating func opened(now: NIODeadline) -> NIODeadline? {
        guard state == .serving, requests == 0, headStarted == nil else { return nil }
        headStarted = now
        lastActivity = now
        return now + headTimeout
    }

    /// The client sent something.
    mutating func read(now: NIODeadline) {
        lastActivity = now
    }

    /// A later head began to arrive and is incomplete: it is due `headTimeout` from its first byte, however it
    /// dribbles (`nil`: already timed, or the first head, timed from the opening).
    mutating func headArriving(now: NIODeadline) -> NIODeadline? {
        guard state == .serving, headStarted == nil, requests > 0 else { return nil }
        headStarted = now
        return now + headTimeout
    }

    /// A request's head was read whole: whether the connection may stay open after its answer, as the client asked
    /// (`keepAlive`) unless a graceful shutdown is under way, and whether it is the connection's first request.
    mutating func headRead(keepAlive: Bool) -> (keepAlive: Bool, first: Bool) {
        headStarted = nil
        requests += 1
        return (keepAlive && !quiescing, requests == 1)
    }

    /// An answer ended (the idle time counts from its end): whether the connection closes after it.
    mutating func answerEnded(keepAlive: Bool, now: NIODeadline) -> Bool {
        lastActivity = now
        return !keepAlive || quiescing
    }

    /// Whether an answer written now must say `Connection: close`.
    func closesAfter(keepAlive: Bool) -> Bool { !keepAlive || quiescing }

    /// Graceful shutdown: `true` when the connection closes now (no exchange under way); otherwise after its answer.
    mutating func quiesce(exchangeUnderWay: Bool) -> Bool {
        quiescing = true
        return state == .serving && !exchangeUnderWay
    }

    /// The client ended its side of the connection.
    func inputClosed(_ progress: ExchangeProgress) -> InputClosedDecision {
        switch progress {
        case .none: .close
        case .requestRead: .lastExchange
        case .readingBody: .bodyCutShort
        }
    }

    /// A timer set for a deadline this machine gave fired at `now`.
    func timerFired(now: NIODeadline, _ progress: ExchangeProgress) -> TimerDecision {
        guard state == .serving else { return .none }
        if let started = headStarted, progress == .none {
            let due = started + headTimeout
            return due <= now ? .headTimedOut : .reschedule(due)
        }
        if progress == .requestRead || progress == .readingBody(held: true) { return .reschedule(now + idleTimeout) }
        let due = lastActivity + idleTimeout
        return due > now ? .reschedule(due) : .closeIdle
    }

    /// A `101` was written: the client's bytes are kept until the WebSocket's handlers are in place.
    mutating func upgrading() {
        guard state == .serving else { return }
        state = .upgrading
    }

    /// Another handler serves the connection from now on.
    mutating func handedOver() {
        guard state != .closing else { return }
        state = .handedOver
    }

    /// The connection closes (or closed): `false` when it already was.
    mutating func close() -> Bool {
        guard state != .closing else { return false }
        state = .closing
        return true
    }
}
