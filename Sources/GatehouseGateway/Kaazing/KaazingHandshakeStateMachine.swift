import GatehouseProtocol
import HTTPTypes
import NIOCore
import NIOWebSocket

/// The gateway's side of KAAZING's extended handshake (``KaazingHandshake``) after its outer `101`, as a state
/// machine in the style of async-http-client's `HTTP1ConnectionStateMachine`: each event returns the action the
/// channel handler (``KaazingHandshakeHandler``) carries out, and the machine holds no socket, so it is tested alone.
///
/// ```
///            frame(s) of a request          decided: 401, attempts left
///  reading ───────────────────────▶ deciding ──────────────────────────▶ reading
///     │  ping → pong                   │ decided: allow ─────────────────▶ admitted (the bridge takes over)
///     │  close, timeout, bad request   │ decided: 403 / other, or 401 with no attempt left
///     ▼                                ▼
///   closed ◀───────────────────────────┘ (the answer, then a close frame)
/// ```
struct KaazingHandshakeStateMachine {
    enum State: Equatable {
        /// Reading the client's request: the message's bytes so far (unmasked), and whether a message has begun.
        case reading(message: [UInt8], inMessage: Bool)
        /// The realm decides on a request; the client's reads are held.
        case deciding
        /// Allowed: the relay takes over (it sends the inner `101` once the upstream accepted).
        case admitted
        case closed
    }

    enum Action {
        case none
        /// Run the realm on this request (hold reads meanwhile) and tell ``decided(_:)``.
        case decide(KaazingHandshake.Request)
        /// Write the answer in a binary frame, then the empty binary frame that ends it; read the next request.
        case answer(KaazingHandshake.Response)
        /// Write the answer (and its empty frame), then close the WebSocket with `code`.
        case answerAndClose(KaazingHandshake.Response, WebSocketErrorCode)
        /// Close the WebSocket with `code` and `reason`.
        case close(WebSocketErrorCode, reason: String)
        /// Answer a ping.
        case pong([UInt8])
        /// Relay to the upstream for this subject (`nil`: an open service).
        case relay(Subject?)
    }

    private(set) var state = State.reading(message: [], inMessage: false)
    /// Requests decided so far on this connection.
    private(set) var attempts = 0
    /// Requests a connection may have decided: the last refusal of a `401` kind is a `403` that closes it.
    let maximumAttempts: Int
    /// The outer upgrade's normalised path (``RequestTarget/path``): every request inside must name it.
    let path: String

    init(path: String, maximumAttempts: Int = KaazingHandshakeStateMachine.defaultMaximumAttempts) {
        self.path = path
        self.maximumAttempts = maximumAttempts
    }

    /// Requests one connection may have decided: a browser's first comes without credentials, and KAAZING's
    /// documented login handlers try two or three passwords.
    static let defaultMaximumAttempts = 5

    // MARK: Events

    /// A frame from the client.
    mutating func frame(opcode: WebSocketOpcode, fin: Bool, payload: [UInt8]) -> Action {
        guard case .reading(var message, let inMessage) = state else {
            if state == .closed { return .none }
            state = .closed
            return .close(.protocolError, reason: "a frame while the handshake's request was decided")
        }
        switch opcode {
        case .ping:
            return .pong(payload)
        case .pong:
            return .none
        case .connectionClose:
            state = .closed
            return .close(.normalClosure, reason: "")
        case .text, .binary, .continuation:
            guard (opcode == .continuation) == inMessage else {
                state = .closed
                return .close(.protocolError, reason: inMessage ? "a new message inside the handshake's request" : "a continuation without a message")
            }
            message += payload
            guard message.count <= KaazingHandshake.maximumSize else {
                state = .closed
                return .close(.messageTooLarge, reason: "the handshake's request is too large")
            }
            guard fin else {
                state = .reading(message: message, inMessage: true)
                return .none
            }
            return request(message)
        default:
            state = .closed
            return .close(.protocolError, reason: "")
        }
    }

    /// The realm's decision on the last request.
    mutating func decided(_ admission: Gateway.Admission) -> Action {
        guard state == .deciding else { return .none }
        switch admission {
        case .allow(let subject):
            state = .admitted
            return .relay(subject)
        case .answer(let answer) where answer.status == .unauthorized && attempts < maximumAttempts:
            state = .reading(message: [], inMessage: false)
            return .answer(Self.response(answer))
        case .answer(let answer):
            state = .closed
            let refusal = answer.status == .unauthorized
                ? Self.response(GatewayAnswer.forbidden(because: "too many attempts on this connection"))
                : Self.response(answer)
            return .answerAndClose(refusal, .policyViolation)
        }
    }

    /// The client sent no complete request in time.
    mutating func timedOut() -> Action {
        guard case .reading = state else { return .none }
        state = .closed
        return .close(.policyViolation, reason: "the handshake timed out")
    }

    /// The gateway shuts down: a handshake still reading is told to go away (one being decided is answered first).
    mutating func shuttingDown() -> Action {
        guard case .reading = state else { return .none }
        state = .closed
        return .close(.goingAway, reason: "the gateway is shutting down")
    }

    /// The connection closed.
    mutating func closed() {
        state = .closed
    }

    private mutating func request(_ message: [UInt8]) -> Action {
        let request: KaazingHandshake.Request
        do {
            request = try KaazingHandshake.Request(parsing: message)
        } catch {
            state = .closed
            return .answerAndClose(Self.response(GatewayAnswer.invalidRequest(error.description)), .policyViolation)
        }
        guard request.method == "GET" else {
            state = .closed
            var refusal = GatewayAnswer.invalidRequest("the handshake's request must be a GET", status: 405)
            refusal.headers[.allow] = "GET"
            return .answerAndClose(Self.response(refusal), .policyViolation)
        }
        guard let target = try? RequestTarget(parsing: request.target), target.path == path else {
            state = .closed
            return .answerAndClose(Self.response(GatewayAnswer.invalidRequest("the handshake's request names another path than the upgrade")), .policyViolation)
        }
        attempts += 1
        state = .deciding
        return .decide(request)
    }

    // MARK: Answers

    /// A gateway answer inside the handshake: its status, reason, fields and body.
    static func response(_ answer: GatewayAnswer) -> KaazingHandshake.Response {
        KaazingHandshake.Response(
            status: answer.status.code, reason: answer.status.reasonPhrase,
            fields: answer.headers.filter { $0.name != .contentLength }.map { ($0.name.rawName, $0.value) },
            body: Array(answer.body.readableBytesView))
    }

    /// The inner `101` once the upstream accepted: the accept value of the outer key, the sub-protocol the upstream
    /// selected, KAAZING's extensions the request asked for and the service grants, one `Sec-WebSocket-Extensions`
    /// field each as KAAZING Gateway writes them (``KaazingExtensionsNegotiation/announced``:
    /// `x-kaazing-idle-timeout; timeout=<ms>` when the service has an inactivity timeout, `x-kaazing-ping-pong;
    /// 01010102`; any other extension declined), and a login module's success challenge (Negotiate's mutual
    /// authentication).
    static func opening(key: String, selectedProtocol: String?, successChallenge: String?,
                        extensions: KaazingExtensionsNegotiation = .none) -> KaazingHandshake.Response {
        var fields: [(name: String, value: String)] = [("Connection", "Upgrade"), ("Upgrade", "websocket"),
                                                       ("Sec-WebSocket-Accept", WebSocketAccept.value(forKey: key))]
        for value in extensions.announced { fields.append(("Sec-WebSocket-Extensions", value)) }
        if let selectedProtocol, !selectedProtocol.isEmpty { fields.append(("Sec-WebSocket-Protocol", selectedProtocol)) }
        if let successChallenge { fields.append(("WWW-Authenticate", successChallenge)) }
        return KaazingHandshake.Response(status: 101, reason: KaazingHandshake.switchingReason, fields: fields)
    }
}
