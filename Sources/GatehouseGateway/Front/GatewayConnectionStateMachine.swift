// One file on purpose (about 480 lines): the connection is one machine — its states with their data, every channel event
// with its actions, the timers' rules, the reads held and flushes owed — and splitting it would split the decisions a
// state's data takes part in.

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

    /// What to do with bytes the client sent (``channelRead(now:)``).
    enum ReadAction: Equatable {
        /// Read them into requests (serving).
        case process
        /// Keep them for the handlers that take over after a `101`.
        case keep
        /// Pass them on to the handler that serves the connection now.
        case passOn
        /// Nothing: the connection is closing.
        case drop
    }

    /// What the end of a burst of reads asks for (``channelReadComplete()``).
    enum ReadCompleteAction: Equatable {
        /// Pass the event on (another handler serves the connection).
        case passOn
        /// Flush what was written upstream since the last flush.
        case flushUpstream
        case none
    }

    /// What the channel's wish to read asks for (``readAsked()``).
    enum ReadRequestAction: Equatable {
        /// Read now.
        case read
        /// Hold the read back: the exchange cannot take more (it goes on at ``readsMayResume(holds:)``).
        case hold
    }

    /// What a change of the client socket's writability asks for (``clientWritabilityChanged(_:)``).
    enum WritabilityAction {
        /// The client's socket takes more again: the exchange's upstream may be read again.
        case resumeUpstreamReads(GatewayExchange)
        case none
    }

    /// A user event the handler may act on.
    enum UserEvent: Equatable {
        /// Graceful shutdown (`ChannelShouldQuiesceEvent`).
        case quiesce
        /// The client sent its last byte (a half-close).
        case inputClosed
        /// Any other event.
        case other
    }

    /// What a user event asks for (``userEvent(_:)``).
    enum UserEventAction {
        /// Pass it on (another handler serves the connection, or the handler has nothing to do with it).
        case passOn
        /// Close now.
        case close
        /// Answer the exchange under way, then close.
        case lastExchange(GatewayExchange)
        /// The body under way was cut short: the client's fault (`400` if nothing was answered yet).
        case bodyCutShort
        /// Nothing now (graceful shutdown closes after the answer under way).
        case none
    }

    /// What an error on the channel asks for (``errorCaught()``).
    enum ErrorAction: Equatable {
        /// Pass it on (another handler serves the connection, or it is closing).
        case passOn
        /// Close.
        case close
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

    // MARK: The channel's events

    /// The client sent bytes at `now`.
    mutating func channelRead(now: NIODeadline) -> ReadAction {
        switch state {
        case .serving:
            lastActivity = now
            return .process
        case .upgrading: return .keep
        case .handedOver: return .passOn
        case .closing: return .drop
        }
    }

    /// A burst of reads ended.
    mutating func channelReadComplete() -> ReadCompleteAction {
        switch state {
        case .upgrading, .handedOver: return .passOn
        case .serving: return flushDue(toClient: false) ? .flushUpstream : .none
        case .closing: return .none
        }
    }

    /// The channel asks to read: held back while a serving connection's exchange cannot take more (``holdsReads``).
    mutating func readAsked(pipelined: Bool, upstreamWritable: Bool) -> ReadRequestAction {
        guard holdsReads(pipelined: pipelined, upstreamWritable: upstreamWritable), case .serving(var flow) = state else { return .read }
        flow.readHeld = true
        state = .serving(flow)
        return .hold
    }

    /// The client's socket takes more (`true`) or is full.
    mutating func clientWritabilityChanged(_ writable: Bool) -> WritabilityAction {
        guard case .serving(let flow) = state else { return .none }
        let exchange = flow.exchange
        modifyFlow { $0.clientWritable = writable }
        guard writable, let exchange else { return .none }
        return .resumeUpstreamReads(exchange)
    }

    /// A user event reached the connection.
    mutating func userEvent(_ event: UserEvent) -> UserEventAction {
        guard case .serving(let flow) = state else {
            // Closing: graceful shutdown is remembered, and nothing more is done.
            if event == .quiesce, phase == .closing { quiescing = true }
            return phase == .closing && event != .other ? .none : .passOn
        }
        switch event {
        case .other:
            return .passOn
        case .quiesce:
            // Close now when idle, else after the answer in progress (`Connection: close`).
            quiescing = true
            return flow.exchange == nil ? .close : .none
        case .inputClosed:
            switch inputClosed(progress) {
            case .close: return .close
            case .lastExchange: return flow.exchange.map { .lastExchange($0) } ?? .close
            case .bodyCutShort: return .bodyCutShort
            }
        }
    }

    /// An error reached the connection.
    func errorCaught() -> ErrorAction {
        isServing ? .close : .passOn
    }

    /// The channel closed, or the handler left it: the connection is closing, and the exchange that was under way (taken
    /// once) is to be let go — its upstream connection and spans.
    mutating func ended() -> GatewayExchange? {
        _ = close()
        return takeAbandonedExchange()
    }

    // MARK: The exchange

    /// Where the exchange under way is, for the timers and the client's end of input.
    var progress: ExchangeProgress {
        exchange?.state.progress ?? .none
    }

    /// Whether the client's socket must not be read now: an exchange waits for admission or an upstream, its
    /// upstream socket is full (`upstreamWritable` false), or a pipelined request already waits its turn
    /// (`pipelined`). A complete request whose answer is awaited does not stop the reads by itself: stopping and
    /// resuming them would cost two `epoll_ctl` calls per request, and a client rarely pipelines (what it sends
    /// meanwhile is kept, unread, and then the reads stop).
    func holdsReads(pipelined: Bool, upstreamWritable: Bool) -> Bool {
        guard case .serving(let flow) = state, let exchange = flow.exchange else { return false }
        return exchange.state.holdsReads(pipelined: pipelined, upstreamWritable: upstreamWritable)
    }

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

    /// The client ended its side of the connection, the exchange being at `progress`.
    func inputClosed(_ progress: ExchangeProgress) -> InputClosedDecision {
        switch progress {
        case .none: .close
        case .requestRead: .lastExchange
        case .readingBody: .bodyCutShort
        }
    }

    /// A timer set for a deadline this machine gave fired at `now`.
    func timerFired(now: NIODeadline) -> TimerDecision {
        timerFired(now: now, progress)
    }

    /// The same, the exchange being at `progress`.
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
