/// How far a server connection's first request has come, shared by its first-request guards
/// (``RequestHeadTimeoutHandler``). Used on the connection's event loop only.
public final class FirstRequestProgress {
    /// The first request's head has arrived in full.
    public var headReceived = false
    /// The server answered the first request itself (`400`, `408`, `431`).
    public var answered = false

    public init() {}
}
