import GatehouseProtocol

/// What a relayed WebSocket agreed with its client about KAAZING's extensions (``KaazingExtensions``), and the
/// service's inactivity timeout they go with, as KAAZING Gateway decides it:
///
/// - the inactivity timeout (``ProtectedService/inactivityTimeout``) is kept whether or not the client asked for
///   anything (KAAZING's `ws.inactivity.timeout`: a `PING` after half of it without reading, the connection closed
///   after all of it);
/// - `x-kaazing-idle-timeout` is announced, with that timeout, to a client that asks for it when the service has one,
///   and declined otherwise; announced, the gateway also writes a `PONG` whenever it wrote nothing for three quarters of
///   the timeout (KAAZING's `IdleTimeoutFilter`), so that the client's own timer never fires on a healthy connection;
/// - `x-kaazing-ping-pong` is announced to a native client that asks for it (never on the emulated transport, which
///   carries `PING` and `PONG` commands of its own): the gateway's pings and pongs to it are then extended ones, it
///   answers the client's extended pings, and text messages beginning with the control bytes are escaped.
struct KaazingExtensionsNegotiation: Equatable, Sendable {
    /// The service's inactivity timeout; `nil`: none.
    var inactivityTimeout: Duration?
    /// `x-kaazing-idle-timeout` was announced.
    var idleTimeout = false
    /// `x-kaazing-ping-pong` was announced.
    var pingPong = false
    /// The client is pinged and closed when it answers none: natively. The emulated transport's pings never reach its
    /// client (its session answers them), and its client's liveness is its requests' (the session's own timeouts).
    var pings = true

    /// Nothing negotiated and no inactivity timeout: the relay as it was.
    static let none = KaazingExtensionsNegotiation()

    init(inactivityTimeout: Duration? = nil, idleTimeout: Bool = false, pingPong: Bool = false) {
        self.inactivityTimeout = inactivityTimeout
        self.idleTimeout = idleTimeout
        self.pingPong = pingPong
    }

    /// The answer to a client's `Sec-WebSocket-Extensions` (or, `emulated`, `X-WebSocket-Extensions`) `values` on a
    /// service whose inactivity timeout is `inactivityTimeout`.
    init(requested values: [String], inactivityTimeout: Duration?, emulated: Bool = false) {
        let requested = KaazingExtensions.requested(in: values)
        self.inactivityTimeout = inactivityTimeout
        idleTimeout = inactivityTimeout != nil && requested.contains(KaazingExtensions.idleTimeout)
        pingPong = !emulated && requested.contains(KaazingExtensions.pingPong)
        pings = !emulated
    }

    /// The timeout in whole milliseconds, as announced.
    var milliseconds: Int64? {
        inactivityTimeout.map { $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000 }
    }

    /// The extensions announced, one `Sec-WebSocket-Extensions` value each, in KAAZING's order (idle timeout first).
    var announced: [String] {
        var values: [String] = []
        if idleTimeout, let milliseconds { values.append(KaazingExtensions.idleTimeoutOffer(milliseconds: milliseconds)) }
        if pingPong { values.append(KaazingExtensions.pingPongOffer) }
        return values
    }
}
