public import Foundation
import GatehouseClient
import GatehouseClientWebSocket

/// A WebSocket through a KAAZING or Gatehouse gateway, as KAAZING's `KGWebSocket`: created by a
/// ``KGWebSocketFactory``, opened by ``connect()`` (which returns at once), with its events given to the block
/// properties (``didOpen``, ``didReceiveMessage``, ``didClose``, ``didReceiveError``) and then to the ``delegate()``,
/// in order, on a serial queue of the socket's own (never the main thread: dispatch to it for the UI, as KAAZING's
/// apps do).
///
/// It speaks KAAZING's extended handshake over the SDK's WebSocket client (`GatewayWebSocketClient.connectInBand`):
/// the gateway's challenges come inside the WebSocket and are answered by the ``challengeHandler()`` on a background
/// thread, as many times as the handler answers (it stops them by returning `nil`, at most
/// ``maximumChallenges``); the gateway's revalidation challenges are answered by the same handler.
open class KGWebSocket: NSObject, @unchecked Sendable {
    /// The most challenges answered for one connection: a bound on a handler that never gives up.
    public static let maximumChallenges = 20

    /// What may change, behind `lock`.
    struct State {
        var location: URL
        var protocols: [String]
        var handler: KGChallengeHandler?
        var timeout: Int32 = 0
        weak var delegate: (any KGWebSocketDelegate)?
        var readyState = KGReadyState_CLOSED
        var started = false
        var negotiated: String?
        /// The open connection's outbound messages and close, written in order by one task.
        var outbound: AsyncStream<Outbound>.Continuation?
        /// A close asked for before the connection opened: sent as soon as it does.
        var pendingClose: (code: UInt16, reason: String?)?
        var onOpen: ((KGWebSocket?) -> Void)?
        var onClose: ((KGWebSocket?, Int, String?, Bool) -> Void)?
        var onError: ((KGWebSocket?, (any Error)?) -> Void)?
        var onMessage: ((KGWebSocket?, (any Sendable)?) -> Void)?
    }

    /// What the application sends, in order.
    enum Outbound {
        case message(GatewayWebSocketMessage)
        case close(code: UInt16, reason: String?)
    }

    private let lock = NSLock()
    private var state: State
    /// Where the events are delivered, in order.
    let callbacks = DispatchQueue(label: "KGWebSocket.callbacks")
    /// Where the challenge handler runs (it may block).
    let challenges = DispatchQueue(label: "KGWebSocket.challenges")

    init(url: URL, protocols: [String]) {
        state = State(location: url, protocols: protocols)
        super.init()
    }

    /// Runs `body` with the state, holding the lock.
    func withState<T>(_ body: (inout State) -> T) -> T {
        lock.withLock { body(&state) }
    }

    // MARK: Properties (KAAZING's accessor methods)

    /// The server's URL.
    open func url() -> URL! { withState { $0.location } }

    /// `KGReadyState_CONNECTING`, `_OPEN`, `_CLOSING` or `_CLOSED`.
    open func readyState() -> KGReadyState { withState { $0.readyState } }

    /// The sub-protocol the server selected, once open.
    open func negotiatedProtocol() -> String! { withState { $0.negotiated } }

    /// The sub-protocols offered.
    open func enabledProtocols() -> [Any]! { withState { $0.protocols } }

    /// Sets the sub-protocols offered (before ``connect()``; ignored after).
    open func setEnabledProtocols(_ protocols: [Any]!) {
        withState { if !$0.started { $0.protocols = (protocols ?? []).compactMap { $0 as? String } } }
    }

    /// The challenge handler (the factory's default unless set).
    open func challengeHandler() -> KGChallengeHandler! { withState { $0.handler } }

    /// Sets the challenge handler for the handshake and for revalidation (before ``connect()``).
    open func setChallengeHandler(_ challengeHandler: KGChallengeHandler!) { withState { $0.handler = challengeHandler } }

    /// The connect timeout in milliseconds (`0`: the SDK's own, 10 s to connect and 10 s for the handshake).
    open func connectTimeout() -> Int32 { withState { $0.timeout } }

    /// Sets the connect timeout in milliseconds (before ``connect()``; a negative one is ignored).
    open func setConnectTimeout(_ connectTimeout: Int32) {
        guard connectTimeout >= 0 else { return }
        withState { $0.timeout = connectTimeout }
    }

    /// The delegate (held weakly).
    open func delegate() -> (any KGWebSocketDelegate)! { withState { $0.delegate } }

    /// Sets the delegate (held weakly).
    open func setDelegate(_ delegate: (any KGWebSocketDelegate)!) { withState { $0.delegate = delegate } }

    // MARK: Blocks

    /// Called when the connection is open.
    public var didOpen: ((KGWebSocket?) -> Void)! {
        get { withState { $0.onOpen } }
        set { withState { $0.onOpen = newValue } }
    }

    /// Called when the connection is closed: the code (`1005` without one, `1006` when it failed or broke), the
    /// reason, and whether the server closed it with a close frame.
    public var didClose: ((KGWebSocket?, Int, String?, Bool) -> Void)! {
        get { withState { $0.onClose } }
        set { withState { $0.onClose = newValue } }
    }

    /// Called when an error occurs (before ``didClose`` when the connection fails).
    public var didReceiveError: ((KGWebSocket?, (any Error)?) -> Void)! {
        get { withState { $0.onError } }
        set { withState { $0.onError = newValue } }
    }

    /// Called with each message: a `String` (text) or `Data` (binary) — `Sendable` where KAAZING's is `id`, so that
    /// Swift 6 code may hand it to the main queue as the seed's demo does.
    public var didReceiveMessage: ((KGWebSocket?, (any Sendable)?) -> Void)! {
        get { withState { $0.onMessage } }
        set { withState { $0.onMessage = newValue } }
    }
}
