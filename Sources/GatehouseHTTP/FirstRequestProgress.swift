/// How far a server connection's first request has come, shared by its first-request guards
/// (``RequestHeadTimeoutHandler``). Used on the connection's event loop only.
package final class FirstRequestProgress {
    /// The first request's head has arrived in full.
    package var headReceived = false
    /// The server answered the first request itself (`400`, `408`, `431`).
    package var answered = false

    package init() {}
}
