import GatehouseClient
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// One client WebSocket connection's logic, from the upgrade request to the closed connection, without I/O: each
/// event returns the action ``GatewayWebSocketChannelHandler`` runs (as async-http-client's `HTTP1ConnectionStateMachine`
/// drives its channel handler). Tested without sockets.
///
/// initialized → upgrading (request sent) → refused (reading the refusal's body) → closed, or → open → closing (our
/// close frame sent, waiting for the peer's) → closed. The peer's close frame is answered with the same code and ends
/// the connection; a ping is answered with a pong carrying its data; a protocol violation is answered with a close
/// frame saying so.
struct GatewayWebSocketStateMachine {
    enum State {
        case initialized
        /// The upgrade request is sent; the response head is awaited.
        case upgrading
        /// A refusal's head arrived; its body (up to ``refusalBodyLimit`` bytes) is read to its end.
        case refused(HTTPResponseHead, body: [UInt8])
        case open(GatewayWebSocketMessageAssembler)
        /// Our close frame is sent; the peer's is awaited. `ending` is what the connection ends with.
        case closing(Ending)
        case closed
    }

    /// How the connection ended: the peer's close frame, if any, and the error that ended it, if any.
    struct Ending {
        var closeFrame: GatewayWebSocketCloseFrame?
        var error: (any Error)?
    }

    /// What the handler does after an event.
    enum Action {
        case none
        /// Write the upgrade request.
        case sendUpgradeRequest
        /// The server upgraded: report the connection open with the sub-protocol it selected.
        case reportOpen(selectedProtocol: String?)
        /// The server refused the upgrade: report the refusal, then close the channel.
        case reportRefusal(GatewayWebSocketRefusal)
        /// The handshake failed: report the error, then close the channel.
        case failHandshake(any Error)
        /// Give the application a message.
        case deliver(GatewayWebSocketMessage)
        /// Write a frame (masked, with FIN).
        case sendFrame(WebSocketOpcode, ByteBuffer)
        /// Write a close frame; then wait for the peer's (``AfterClose/awaitPeer``) or end at once.
        case sendClose(GatewayWebSocketCloseFrame, then: AfterClose)
        /// End the connection: finish the application's messages, report the close, close the channel.
        case finish(Ending)
    }

    enum AfterClose {
        /// Wait for the peer's close frame (within the closing timeout).
        case awaitPeer
        /// End the connection once written.
        case finish(Ending)
    }

    /// The most of a refusal's body kept (its JSON error, say).
    static let refusalBodyLimit = 1 << 16

    private(set) var state: State = .initialized
    let maxMessageSize: Int
    /// The sub-protocols offered: the server's choice must be one of them.
    let offeredProtocols: [String]

    init(maxMessageSize: Int, offeredProtocols: [String]) {
        self.maxMessageSize = maxMessageSize
        self.offeredProtocols = offeredProtocols
    }

    // MARK: The handshake

    mutating func channelActive() -> Action {
        guard case .initialized = state else { return .none }
        state = .upgrading
        return .sendUpgradeRequest
    }

    /// The upgrader accepted the server's `101` (its `Sec-WebSocket-Accept` checked).
    mutating func upgraded(_ head: HTTPResponseHead) -> Action {
        guard case .upgrading = state else { return .none }
        let selected = head.headers.first(name: "Sec-WebSocket-Protocol")
        if let selected, !offeredProtocols.contains(selected) {
            state = .closed
            return .failHandshake(GatewayClientError.transport("the server selected the sub-protocol \(selected), which was not offered"))
        }
        state = .open(GatewayWebSocketMessageAssembler(maxMessageSize: maxMessageSize))
        return .reportOpen(selectedProtocol: selected)
    }

    /// A response part that was not an upgrade: the refusal.
    mutating func responsePart(_ part: HTTPClientResponsePart) -> Action {
        switch (state, part) {
        case (.upgrading, .head(let head)):
            state = .refused(head, body: [])
            return .none
        case (.refused(let head, var body), .body(let bytes)):
            body.append(contentsOf: bytes.readableBytesView.prefix(Self.refusalBodyLimit - body.count))
            state = .refused(head, body: body)
            return .none
        case (.refused(let head, let body), .end):
            state = .closed
            return .reportRefusal(GatewayWebSocketRefusal(head: head, body: body))
        default:
            return .none
        }
    }

    /// The handshake took longer than allowed.
    mutating func handshakeTimedOut() -> Action {
        switch state {
        case .initialized, .upgrading, .refused:
            state = .closed
            return .failHandshake(GatewayClientError.transport("the WebSocket handshake timed out"))
        default:
            return .none
        }
    }

    // MARK: The open connection

    /// A frame from the server.
    mutating func frameReceived(_ frame: WebSocketFrame) -> Action {
        switch state {
        case .open(var assembler):
            if frame.rsv1 || frame.rsv2 || frame.rsv3 { return violation(.protocolError, "reserved bits set without an extension") }
            if frame.maskKey != nil { return violation(.protocolError, "a masked frame from the server") }
            switch frame.opcode {
            case .ping:
                return .sendFrame(.pong, frame.unmaskedData)
            case .pong:
                return .none
            case .connectionClose:
                guard let received = GatewayWebSocketCloseFrame(payload: frame.unmaskedData) else {
                    return violation(.protocolError, "a malformed close frame")
                }
                state = .closed
                // Answered with the same code (RFC 6455 §5.5.1); a close frame without one with 1000.
                let answer = received == .noStatus ? GatewayWebSocketCloseFrame(closeCode: .normalClosure) : GatewayWebSocketCloseFrame(closeCode: received.closeCode)
                return .sendClose(answer, then: .finish(Ending(closeFrame: received)))
            case .text, .binary, .continuation:
                let outcome = assembler.append(frame)
                switch outcome {
                case .incomplete:
                    state = .open(assembler)
                    return .none
                case .message(let message):
                    state = .open(assembler)
                    return .deliver(message)
                case .violation(let close):
                    return violation(close)
                }
            default:
                return violation(.protocolError, "an unknown opcode")
            }
        case .closing(var ending):
            // Only the peer's close frame matters now (RFC 6455 §1.4: data after ours is discarded).
            guard frame.opcode == .connectionClose else { return .none }
            ending.closeFrame = GatewayWebSocketCloseFrame(payload: frame.unmaskedData)
            state = .closed
            return .finish(ending)
        default:
            return .none
        }
    }

    /// The application sends a message: the frame to write, or an error when the connection is not open.
    mutating func send(_ message: GatewayWebSocketMessage) throws -> Action {
        guard case .open = state else { throw GatewayClientError.transport("the WebSocket is closed") }
        switch message {
        case .text(let text): return .sendFrame(.text, ByteBuffer(string: text))
        case .binary(let bytes): return .sendFrame(.binary, bytes)
        }
    }

    /// The application closes the connection: our close frame, then the peer's is awaited.
    mutating func close(_ frame: GatewayWebSocketCloseFrame) -> Action {
        guard case .open = state else { return .none }
        state = .closing(Ending())
        return .sendClose(frame, then: .awaitPeer)
    }

    /// The peer did not answer our close frame in time.
    mutating func closeTimedOut() -> Action {
        guard case .closing(let ending) = state else { return .none }
        state = .closed
        return .finish(ending)
    }

    // MARK: Either

    /// An error in the pipeline: a handshake's ends it; an open connection's closes it (a framing error with `1002`).
    mutating func errorCaught(_ error: any Error) -> Action {
        switch state {
        case .initialized, .upgrading, .refused:
            state = .closed
            return .failHandshake(error)
        case .open:
            if error is NIOWebSocketError {
                return violation(GatewayWebSocketCloseFrame(closeCode: .protocolError, reason: "a malformed frame"), error: error)
            }
            state = .closed
            return .finish(Ending(error: error))
        case .closing(var ending):
            ending.error = ending.error ?? error
            state = .closed
            return .finish(ending)
        case .closed:
            return .none
        }
    }

    /// The connection is gone.
    mutating func channelInactive() -> Action {
        switch state {
        case .initialized, .upgrading, .refused:
            state = .closed
            return .failHandshake(GatewayClientError.transport("the server closed the connection during the WebSocket handshake"))
        case .open:
            state = .closed
            return .finish(Ending())
        case .closing(let ending):
            state = .closed
            return .finish(ending)
        case .closed:
            return .none
        }
    }

    private mutating func violation(_ code: WebSocketErrorCode, _ reason: String) -> Action {
        violation(GatewayWebSocketCloseFrame(closeCode: code, reason: reason))
    }

    /// Closes for a violation: our close frame says why, and the application's messages end with the error.
    private mutating func violation(_ close: GatewayWebSocketCloseFrame, error: (any Error)? = nil) -> Action {
        state = .closed
        let error = error ?? GatewayClientError.transport("WebSocket closed: \(close.reason ?? "\(close.closeCode)")")
        return .sendClose(close, then: .finish(Ending(error: error)))
    }
}
