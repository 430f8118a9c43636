public import Foundation

/// Creates ``KGWebSocket``s, as KAAZING's `KGWebSocketFactory`: each inherits the factory's default challenge handler
/// and connect timeout at its creation.
open class KGWebSocketFactory: NSObject, @unchecked Sendable {
    private let lock = NSLock()
    private var challengeHandler: KGChallengeHandler?
    private var connectTimeout: Int32 = 0

    /// `[KGWebSocketFactory createWebSocketFactory]`.
    open class func createWebSocketFactory() -> KGWebSocketFactory {
        KGWebSocketFactory()
    }

    public override init() {
        super.init()
    }

    /// A WebSocket to `url` (`ws://` or `wss://`), not yet connected.
    open func createWebSocket(_ url: URL) -> KGWebSocket {
        createWebSocket(url, protocols: [])
    }

    /// A WebSocket to `url` offering `protocols` (strings) to the server, not yet connected.
    open func createWebSocket(_ url: URL, protocols: [Any]?) -> KGWebSocket {
        let (handler, timeout) = lock.withLock { (challengeHandler, connectTimeout) }
        let socket = KGWebSocket(url: url, protocols: (protocols ?? []).compactMap { $0 as? String })
        socket.setChallengeHandler(handler)
        socket.setConnectTimeout(timeout)
        return socket
    }

    /// The challenge handler the factory's WebSockets get.
    open func defaultChallengeHandler() -> KGChallengeHandler? {
        lock.withLock { challengeHandler }
    }

    /// Sets the challenge handler the WebSockets created next get (for the handshake and for revalidation).
    open func setDefaultChallengeHandler(_ challengeHandler: KGChallengeHandler?) {
        lock.withLock { self.challengeHandler = challengeHandler }
    }

    /// The connect timeout the factory's WebSockets get, in milliseconds (`0`, the default: no timeout of the
    /// caller's, see ``KGWebSocket/setConnectTimeout(_:)``).
    open func defaultConnectTimeout() -> Int32 {
        lock.withLock { connectTimeout }
    }

    /// Sets the connect timeout, in milliseconds, of the WebSockets created next; a negative one is ignored
    /// (KAAZING's raises `NSInvalidArgumentException`).
    open func setDefaultConnectTimeout(_ connectTimeout: Int32) {
        guard connectTimeout >= 0 else { return }
        lock.withLock { self.connectTimeout = connectTimeout }
    }
}
