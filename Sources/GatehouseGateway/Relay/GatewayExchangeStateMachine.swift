/// One request and its answer through the gateway, decided apart from the socket: where the exchange is (deciding,
/// connecting, relaying, answered), whether its two messages are complete, whether the client's connection and the
/// upstream's outlive it, and what an upstream's failure means for it.
///
/// Events in, decisions out, in the style of async-http-client's `HTTP1ConnectionStateMachine`; `GatewayHTTPHandler`
/// carries the decisions out (writes, connects, closes). The connection's own life (timers, graceful shutdown) is
/// ``GatewayConnectionStateMachine``'s.
///
/// ```
///  deciding ──admitted──▶ connecting ──attached──▶ relaying ──answer's end──▶ (complete when the request is too)
///     │                       ▲   │                   │
///     │                       └───┴──retry (a reused connection closed before answering an idempotent request
///     │                                  without a body)
///     └──────────── the gateway answers itself (refused, unavailable, 502/504, 400) ──▶ answered
///
///  keepingBody (KAAZING's emulated upstream: the body is read whole, reads not held) ──▶ answered
/// ```
struct GatewayExchangeStateMachine {
    enum Phase: Equatable {
        /// Admission (on a task) is under way; the body waits.
        case deciding
        /// The gateway reads the body whole itself (KAAZING's emulated upstream), then decides: the client's reads go
        /// on until it is whole, however many reads it takes.
        case keepingBody
        /// Waiting for an upstream connection; the body waits.
        case connecting
        /// The request is relayed to its upstream, the answer back.
        case relaying
        /// The gateway has answered (or the answer is complete): the rest of the client's body is dropped.
        case answered
    }

    private(set) var phase = Phase.deciding
    /// Whether the client's connection stays open after this exchange.
    private(set) var keepAlive: Bool
    /// Whether the client's request has been read whole.
    private(set) var requestEnded: Bool
    /// Whether the answer's head has been written (by the upstream or the gateway).
    private(set) var responseStarted = false
    /// Whether the answer has been written whole.
    private(set) var responseEnded = false
    /// Whether the client's body failed (malformed, cut short): `400`, not `502`.
    private(set) var bodyFailed = false
    /// Whether the request may be sent again on a fresh connection: idempotent (RFC 9110 §9.2.2) and bodiless.
    private let retriable: Bool
    /// Whether the upstream connection had served an exchange before (a stale one may close under us).
    private var reused = false
    private var retried = false
    /// Whether the upstream connection may serve another exchange once this one is complete.
    private var upstreamReusable = false

    /// - Parameters:
    ///   - keepAlive: whether the client's connection may outlive the exchange (its request's and the connection's say).
    ///   - requestEnded: whether the request is whole already (it has no body).
    ///   - retriable: whether sending the request twice does no harm (an idempotent method, no body).
    init(keepAlive: Bool, requestEnded: Bool, retriable: Bool) {
        self.keepAlive = keepAlive
        self.requestEnded = requestEnded
        self.retriable = retriable
    }

    /// Whether both messages are complete: the exchange ends, the next request's may start.
    var isComplete: Bool { requestEnded && responseEnded }

    /// Whether the upstream connection goes back for the next request (else it is closed).
    var keepsUpstream: Bool { upstreamReusable && isComplete }

    /// Where the exchange is, for the connection's timers and the client's end of input.
    var progress: GatewayConnectionStateMachine.ExchangeProgress {
        requestEnded ? .requestRead : .readingBody(held: phase == .deciding || phase == .connecting)
    }

    /// Whether the client's socket must not be read now: admission or an upstream is awaited, or the upstream's
    /// socket is full. A complete request only when more bytes (a pipelined request) wait unread.
    func holdsReads(pipelined: Bool, upstreamWritable: Bool) -> Bool {
        if requestEnded { return pipelined }
        switch phase {
        case .deciding, .connecting: return true
        case .relaying: return !upstreamWritable
        case .keepingBody, .answered: return false
        }
    }

    // MARK: The client's side

    /// What to do with a piece of the request's body.
    enum BodyAction: Equatable {
        /// To the upstream, now.
        case forward
        /// Kept until the upstream connection is ready.
        case hold
        /// Dropped: the gateway answered.
        case drop
    }

    /// A piece of the request's body was read (`ended`: its last).
    mutating func bodyRead(ended: Bool) -> BodyAction {
        if ended { requestEnded = true }
        switch phase {
        case .relaying: return .forward
        case .deciding, .connecting, .keepingBody: return .hold
        case .answered: return .drop
        }
    }

    /// The gateway reads the body whole itself before deciding (KAAZING's emulated upstream): reads are not held.
    mutating func keepingBody() {
        phase = .keepingBody
    }

    /// The body is kept whole by the gateway itself (KAAZING's emulated upstream): it is not relayed.
    mutating func bodyKept(ended: Bool) {
        if ended { requestEnded = true }
    }

    /// The connection closes after this exchange (graceful shutdown, a refused upgrade, a body the gateway will not read).
    mutating func lastExchange() {
        keepAlive = false
    }

    /// What a malformed or cut-short request body leads to.
    enum MalformedBody: Equatable {
        /// `400`, then the connection closes.
        case answer
        /// The answer has begun: the connection closes.
        case close
    }

    /// The client framed its body wrongly (its fault): the connection ends after this exchange.
    mutating func bodyMalformed() -> MalformedBody {
        keepAlive = false
        bodyFailed = true
        return responseStarted ? .close : .answer
    }

    // MARK: Admission and the upstream

    /// The gateway decides (a realm's login chain on a task, an emulated session's answer).
    mutating func deciding() {
        phase = .deciding
    }

    /// An upstream connection is asked for.
    mutating func connecting() {
        phase = .connecting
    }

    /// The request's head goes out on an upstream connection (`reused`: it served an exchange before).
    mutating func attached(reused: Bool) {
        self.reused = reused
        phase = .relaying
    }

    /// The upstream's answer begins.
    ///
    /// - Parameters:
    ///   - endsByClose: the answer ends when the upstream closes (no length, no chunks).
    ///   - lengthKnown: the answer has a `Content-Length`.
    ///   - clientIsHTTP10: the client speaks HTTP/1.0 (chunks are taken off, so an answer without a length ends with
    ///     the connection).
    ///   - upstreamKeepsAlive: the upstream keeps its connection open after the answer.
    mutating func answerStarted(endsByClose: Bool, lengthKnown: Bool, clientIsHTTP10: Bool, upstreamKeepsAlive: Bool) {
        responseStarted = true
        upstreamReusable = !endsByClose && upstreamKeepsAlive
        if (clientIsHTTP10 && !lengthKnown) || endsByClose { keepAlive = false }
    }

    /// The upstream's answer ended (`reusable`: its connection may carry another request).
    mutating func upstreamAnswerEnded(reusable: Bool) {
        if !reusable { upstreamReusable = false }
    }

    /// What an upstream connection's failure leads to.
    enum UpstreamFailure: Equatable {
        /// Silent past the read timeout: `504`; never sent again (the upstream may still be working on it).
        case gatewayTimeout
        /// A reused connection the upstream had closed meanwhile: the request once more, on a fresh connection.
        case retry
        /// `502` (or `400` when the client's own body failed first: ``bodyFailed``).
        case unavailable
        /// Mid-answer: the answer cannot be completed; the client's connection closes.
        case cutOff
    }

    /// The upstream connection failed (`timedOut`: silent past the read timeout).
    mutating func upstreamFailed(timedOut: Bool) -> UpstreamFailure {
        guard !responseStarted else { return .cutOff }
        if timedOut { return .gatewayTimeout }
        // Nothing of the request was lost with the connection (it has no body), and sending it twice does no harm: a
        // POST the upstream took before closing must not run twice.
        if reused, !retried, retriable {
            retried = true
            return .retry
        }
        return .unavailable
    }

    // MARK: The answer

    /// The gateway answers itself; `false` when an answer has begun already (nothing more can be said).
    mutating func answering() -> Bool {
        guard !responseStarted else { return false }
        phase = .answered
        responseStarted = true
        return true
    }

    /// An answer the gateway writes itself has begun (KAAZING's emulated downstream).
    mutating func answerBegun() {
        responseStarted = true
    }

    /// The answer's last part is written. `true`: the request is not whole yet, so its upstream connection cannot be
    /// reused and the rest of it is read and dropped.
    mutating func answerEnded() -> Bool {
        responseEnded = true
        guard !requestEnded else { return false }
        phase = .answered
        return true
    }
}
