/// How far a connection's first request has come, shared by the gateway's first-request guards
/// (``RequestHeadTimeoutHandler``, ``MalformedFirstRequestHandler``). Used on the connection's event loop only.
final class FirstRequestProgress {
    /// The first request's head has arrived in full.
    var headReceived = false
    /// The gateway answered the first request itself (`400`, `408`, `431`).
    var answered = false
}
