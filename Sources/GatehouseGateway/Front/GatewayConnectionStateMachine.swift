// One file on purpose (about 330 lines): the connection is one machine — its states with their data, the timers' rules,
// the reads held and flushes owed — and splitting it would split the decisions a state's data takes part in.

import NIOCore

/// A gateway connection, as ``GatewayHTTPHandler`` runs it: whether it still serves HTTP (and then its exchange under
/// way, the read it holds back, what waits to be flushed each way), is switching to a WebSocket, was handed over or is
/// closing; graceful shutdown; and its timers — the head timeout (the first head from the connection's opening, a later
/// one from its first byte) and the idle timeout (between requests, or while a request's body stalls). Events in,
/// decisions out, in the manner of async-http-client's `HTTP1ConnectionStateMachine`: the states carry their data, no
/// socket, no timer, no clock of its own (every event brings `now`), so it is tested alone
/// (`GatewayConnectionStateMachineTests`); the handler carries the decisions out. An exchange's own progress
/// (deciding, connecting, relaying, answered) is ``GatewayExchangeStateMachine``'s.
///
/// ```
///                      head read: exchangeBegan                answer's end, keep-alive: exchangeEnded
///  serving(flow) ─────────────────────────────▶ serving(flow + exchange) ──────────────────────▶ serving(flow)
///     │ 101 written: upgrading(readHeld)   │ malformed, 408, idle, an answer with close, input closed when idle,
///     ▼                                    ▼ quiesce when idle, the client gone
///  upgrading ──handlers in place──▶ handedOver ──▶ closing(abandoned: the exchange under way, until let go)
/// ```
struct GatewayConnectionStateMachine {
    enum State {
        /// Reading requests and answering them: the exchange under way and what the connection carries between events.
        case serving(Flow)
        /// A `101` was written: what the client sends is kept for the handlers that take over (`readHeld`: a read
        /// held back while serving, passed on once they are in place).
        case upgrading(readHeld: Bool)
        /// Another handler serves the connection (a WebSocket bridge, KAAZING's handshake, an emulated WebSocket's
        /// downstream); this one only passes on what still reaches it.
        case handedOver
        /// Closing or closed: nothing more is read or answered (`abandoned`: the exchange that was under way, until the
        /// handler lets its upstream connection and spans go).
        case closing(abandoned: GatewayExchange?)
    }

    /// What a serving connection carries from one event to the next: its exchange, the read it holds back, whether it is inside
    /// its reading loop, what waits to be flushed each way, an answer's head held for the first bytes of its body,
    /// and whether the client's socket takes more.
    struct Flow {
        /// The exchange under way: one at a time (a pipelined request waits, unread, until it ends).
        var exchange: GatewayExchange?
        /// A `read` held back while the exchange cannot take more.
        var readHeld = false
        /// Inside the reading loop (an answer given from it must not start the loop again).
        var processing = false
        /// Something was written to the client since its last flush.
        var clientFlushPending = false
        /// Something was written to the upstream since its last flush.
        var upstreamFlushPending = false
        /// The client's socket takes more (kept from the channel's writability events).
        var clientWritable = true
        /// An answer's head held back for the first bytes of its body, when that is small: one buffer, one write.
        var heldAnswerHead: ByteBuffer?
    }

    /// The connection's states without their data.
    enum Phase: Equatable {
        case serving, upgrading, handedOver, closing
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

    private(set) var state = State.serving(Flow())
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

    var phase: Phase {
        switch state {
        case .serving: .serving
        case .upgrading: .upgrading
        case .handedOver: .handedOver
        case .closing: .closing
        }
    }

    var isServing: Bool { phase == .serving }

    // MARK: Events

    /// The connection is open: the first head is due `headTimeout` from now (`nil`: already timed).
    mutating func opened(now: NIODeadline) -> NIODeadline? {
        guard isServing, requests == 0, headStarted == nil else { return nil }
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
        guard isServing, headStarted == nil, requests > 0 else { return nil }
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
    mutating func quiesce() -> Bool {
        quiescing = true
        return isServing && exchange == nil
    }

    // MARK: The exchange

    /// The exchange under way (only while serving).
    var exchange: GatewayExchange? {
        guard case .serving(let flow) = state else { return nil }
        return flow.exchange
    }

    /// A request's head was read and its exchange begins.
    mutating func exchangeBegan(_ exchange: GatewayExchange) {
        modifyFlow { $0.exchange = exchange }
    }

    /// The exchange under way ended (answered, abandoned, or its connection handed over).
    mutating func exchangeEnded() {
        modifyFlow { $0.exchange = nil }
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
        guard isServing else { return .none }
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
        guard case .serving(let flow) = state else { return }
        state = .upgrading(readHeld: flow.readHeld)
    }

    /// Another handler serves the connection from now on: whether a read held back must be passed on to it.
    @discardableResult
    mutating func handedOver() -> Bool {
        let readHeld: Bool
        switch state {
        case .closing: return false
        case .upgrading(let held): readHeld = held
        case .serving, .handedOver: readHeld = false
        }
        state = .handedOver
        return readHeld
    }

    /// The connection closes (or closed): `false` when it already was.
    mutating func close() -> Bool {
        switch state {
        case .closing: return false
        case .serving(let flow): state = .closing(abandoned: flow.exchange)
        case .upgrading, .handedOver: state = .closing(abandoned: nil)
        }
        return true
    }

    /// The exchange that was under way when the connection closed, taken once: its upstream connection and spans are
    /// to be let go.
    mutating func takeAbandonedExchange() -> GatewayExchange? {
        guard case .closing(let abandoned?) = state else { return nil }
        state = .closing(abandoned: nil)
        return abandoned
    }

    // MARK: Reads and writes while serving

    /// The channel asks to read: whether the read goes on now (`holds`: the exchange cannot take more; the read is
    /// then kept until ``readsMayResume(holds:)``). Only a serving connection holds reads.
    mutating func readAsked(holds: Bool) -> Bool {
        guard holds, case .serving(var flow) = state else { return true }
        flow.readHeld = true
        state = .serving(flow)
        return false
    }

    /// Whether a read is held back (cheap to ask before working out whether it may go on).
    var readHeld: Bool {
        guard case .serving(let flow) = state else { return false }
        return flow.readHeld
    }

    /// Whether the read held back goes on now (the exchange can take more).
    mutating func readsMayResume(holds: Bool) -> Bool {
        guard !holds, case .serving(var flow) = state, flow.readHeld else { return false }
        flow.readHeld = false
        state = .serving(flow)
        return true
    }

    /// The reading loop starts: `false` when it is already running (an answer given from inside it).
    mutating func processingStarts() -> Bool {
        guard case .serving(var flow) = state, !flow.processing else { return false }
        flow.processing = true
        state = .serving(flow)
        return true
    }

    /// The reading loop ended.
    mutating func processingEnded() {
        modifyFlow { $0.processing = false }
    }

    /// Bytes were written to the client (`true`) or upstream (`false`), not flushed yet.
    mutating func wrote(toClient: Bool) {
        modifyFlow { flow in
            if toClient { flow.clientFlushPending = true } else { flow.upstreamFlushPending = true }
        }
    }

    /// Whether a flush to the client (`true`) or upstream (`false`) is due now; it is taken as done.
    mutating func flushDue(toClient: Bool) -> Bool {
        guard case .serving(var flow) = state else { return false }
        let due = toClient ? flow.clientFlushPending : flow.upstreamFlushPending
        guard due else { return false }
        if toClient { flow.clientFlushPending = false } else { flow.upstreamFlushPending = false }
        state = .serving(flow)
        return true
    }

    /// The client's socket takes more (`true`) or is full.
    mutating func clientWritabilityChanged(_ writable: Bool) {
        modifyFlow { $0.clientWritable = writable }
    }

    /// Whether the client's socket takes more (always, once the connection no longer serves HTTP).
    var clientWritable: Bool {
        guard case .serving(let flow) = state else { return true }
        return flow.clientWritable
    }

    /// Holds an answer's head for the first bytes of its body.
    mutating func holdAnswerHead(_ head: ByteBuffer) {
        modifyFlow { $0.heldAnswerHead = head }
    }

    /// The answer's head held back, taken.
    mutating func takeHeldAnswerHead() -> ByteBuffer? {
        guard case .serving(var flow) = state, let head = flow.heldAnswerHead else { return nil }
        flow.heldAnswerHead = nil
        state = .serving(flow)
        return head
    }

    private mutating func modifyFlow(_ change: (inout Flow) -> Void) {
        guard case .serving(var flow) = state else { return }
        // Out of the enum while it changes: the held head's buffer stays uniquely referenced.
        state = .closing(abandoned: nil)
        change(&flow)
        state = .serving(flow)
    }
}
