/// A relayed WebSocket's inactivity timeout towards its client, as KAAZING Gateway keeps it (its `WsCheckAliveFilter`
/// for `ws.inactivity.timeout`, its `IdleTimeoutFilter` for `x-kaazing-idle-timeout`), on MINA's idle events: a
/// reader-idle event fires when nothing was read for a delay since the last read or the last such event, a
/// writer-idle event likewise for writes.
///
/// ```
///  reader idle for half the timeout:  no ping out ──▶ PING (standard, or extended under x-kaazing-ping-pong), await a PONG
///                                     a ping out, no PONG read since ──▶ close the connection
///  a PONG read                     ──▶ no ping out
///  writer idle for timeout − max(timeout/4, 1 ms), x-kaazing-idle-timeout announced ──▶ PONG
/// ```
///
/// Events in, decisions out, the instants given (tested alone); ``WebSocketBridge`` tells it what it reads and
/// writes, sets its timer for ``nextWake``, and writes the frames or closes.
struct WebSocketKeepAliveStateMachine {
    typealias Instant = ContinuousClock.Instant

    enum Action: Equatable {
        /// Write a `PING` (a `PONG` is now awaited).
        case ping
        /// Write an unsolicited `PONG` (the client's idle timer sees a frame).
        case pong
        /// Close the connection: no `PONG` came back.
        case close
    }

    /// How long reading nothing starts a ping, and then closes: half the timeout (KAAZING's `maxExpectedRtt`); `nil`:
    /// never (the emulated transport, whose client's liveness is its requests').
    let pingDelay: Duration?
    /// How long writing nothing sends a `PONG` (KAAZING: the timeout less a quarter of it); `nil`: never
    /// (`x-kaazing-idle-timeout` not announced).
    let pongDelay: Duration?
    private var lastRead: Instant
    private var lastReaderIdle: Instant
    private var lastWrite: Instant
    private var lastWriterIdle: Instant
    /// A ping went out and no `PONG` was read since (KAAZING's `NextAction.PONG`).
    private(set) var awaitingPong = false
    /// The connection was given up.
    private(set) var closed = false

    /// `pings`: the client is pinged (and closed when it answers none); `pongs`: `x-kaazing-idle-timeout` was announced.
    init(inactivityTimeout: Duration, pings: Bool = true, pongs: Bool, now: Instant) {
        pingDelay = pings ? max(inactivityTimeout / 2, .milliseconds(1)) : nil
        pongDelay = pongs ? inactivityTimeout - max(inactivityTimeout / 4, .milliseconds(1)) : nil
        lastRead = now
        lastReaderIdle = now
        lastWrite = now
        lastWriterIdle = now
    }

    /// A frame was read from the client.
    mutating func read(now: Instant) {
        lastRead = now
    }

    /// A `PONG` (standard, or extended) was read from the client: no ping is awaited any more.
    mutating func pongRead(now: Instant) {
        lastRead = now
        awaitingPong = false
    }

    /// A frame was written to the client.
    mutating func wrote(now: Instant) {
        lastWrite = now
    }

    /// When the timer is to fire next (`nil` once closed).
    var nextWake: Instant? {
        guard !closed else { return nil }
        let reader = pingDelay.map { max(lastRead, lastReaderIdle) + $0 }
        let writer = pongDelay.map { max(lastWrite, lastWriterIdle) + $0 }
        guard let reader, let writer else { return reader ?? writer }
        return min(reader, writer)
    }

    /// The timer fired: what is due at `now`, in order.
    mutating func timerFired(now: Instant) -> [Action] {
        guard !closed else { return [] }
        var actions: [Action] = []
        if let pingDelay, now >= max(lastRead, lastReaderIdle) + pingDelay {
            lastReaderIdle = now
            if awaitingPong {
                closed = true
                return [.close]
            }
            awaitingPong = true
            lastWrite = now
            actions.append(.ping)
        }
        if let pongDelay, now >= max(lastWrite, lastWriterIdle) + pongDelay {
            lastWriterIdle = now
            lastWrite = now
            actions.append(.pong)
        }
        return actions
    }
}
