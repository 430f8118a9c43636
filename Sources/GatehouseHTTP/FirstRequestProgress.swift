/// How far a connection's first request has come, shared by the first-request guards of a connection
/// (``RequestHeadTimeoutHandler``, and the gateway's `MalformedFirstRequestHandler`). Used on the connection's event
/// loop only.
public final class FirstRequestProgress {
    /// The first request's head has arrived in full.
    public var headReceived = false
    /// The server answered the first request itself (`400`, `408`, `431`).
    public var answered = false

    public init() {}
}
