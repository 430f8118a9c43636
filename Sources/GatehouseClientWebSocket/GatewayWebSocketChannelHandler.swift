import GatehouseClient
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// Runs ``GatewayWebSocketStateMachine``'s actions on one channel: writes the upgrade request and the frames, arms the
/// timeouts, reports the handshake's outcome, hands the messages to the application and reports the close. It decides
/// nothing itself.
final class GatewayWebSocketChannelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = GatewayWebSocketChannelEvent

    /// What the handshake ended with.
    enum Handshake {
        case opened(selectedProtocol: String?)
        case refused(GatewayWebSocketRefusal)
    }

    private var stateMachine: GatewayWebSocketStateMachine
    private let url: GatewayWebSocketURL
    private let configuration: GatewayWebSocketConfiguration
    private let handshake: EventLoopPromise<Handshake>
    private let closed: EventLoopPromise<GatewayWebSocketCloseFrame?>
    private let messages: AsyncThrowingStream<GatewayWebSocketMessage, any Error>.Continuation
    private var context: ChannelHandlerContext?
    private var handshakeTimer: Scheduled<Void>?
    private var closeTimer: Scheduled<Void>?

    init(url: GatewayWebSocketURL, configuration: GatewayWebSocketConfiguration, handshake: EventLoopPromise<Handshake>,
         closed: EventLoopPromise<GatewayWebSocketCloseFrame?>, messages: AsyncThrowingStream<GatewayWebSocketMessage, any Error>.Continuation) {
        stateMachine = GatewayWebSocketStateMachine(maxMessageSize: configuration.maxMessageSize, offeredProtocols: configuration.protocols)
        self.url = url
        self.configuration = configuration
        self.handshake = handshake
        self.closed = closed
        self.messages = messages
    }

    // MARK: Events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { channelActive(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        run(stateMachine.channelActive())
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        run(stateMachine.channelInactive())
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .response(let part): run(stateMachine.responsePart(part))
        case .frame(let frame): run(stateMachine.frameReceived(frame))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        run(stateMachine.errorCaught(error))
    }

    /// The upgrader accepted the server's `101` and put the frame codec in place.
    func upgraded(_ head: HTTPResponseHead) {
        run(stateMachine.upgraded(head))
    }

    /// The application's message: written, or failed when the connection is not open.
    func send(_ message: GatewayWebSocketMessage) -> EventLoopFuture<Void> {
        guard let context else { return closed.futureResult.eventLoop.makeFailedFuture(GatewayClientError.transport("the WebSocket is closed")) }
        do {
            return run(try stateMachine.send(message)) ?? context.eventLoop.makeSucceededVoidFuture()
        } catch {
            return context.eventLoop.makeFailedFuture(error)
        }
    }

    /// The application closes: our close frame written (the peer's is then awaited, within the handshake timeout).
    func close(_ frame: GatewayWebSocketCloseFrame) -> EventLoopFuture<Void> {
        run(stateMachine.close(frame)) ?? closed.futureResult.eventLoop.makeSucceededVoidFuture()
    }

    // MARK: Actions

    /// Runs `action`; the write's future when it wrote something.
    @discardableResult
    private func run(_ action: GatewayWebSocketStateMachine.Action) -> EventLoopFuture<Void>? {
        guard let context else { return nil }
        switch action {
        case .none:
            return nil
        case .sendUpgradeRequest:
            handshakeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(configuration.handshakeTimeout)) { [self] in
                run(stateMachine.handshakeTimedOut())
            }
            var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: url.target)
            head.headers.add(name: "Host", value: url.hostField)
            if !configuration.protocols.isEmpty {
                head.headers.add(name: "Sec-WebSocket-Protocol", value: configuration.protocols.joined(separator: ", "))
            }
            for field in configuration.headers { head.headers.add(name: field.name, value: field.value) }
            context.write(NIOAny(HTTPClientRequestPart.head(head)), promise: nil)
            context.writeAndFlush(NIOAny(HTTPClientRequestPart.end(nil)), promise: nil)
            return nil
        case .reportOpen(let selectedProtocol):
            handshakeTimer?.cancel()
            handshake.succeed(.opened(selectedProtocol: selectedProtocol))
            return nil
        case .reportRefusal(let refusal):
            handshakeTimer?.cancel()
            handshake.succeed(.refused(refusal))
            end(Ending(), context: context)
            return nil
        case .failHandshake(let error):
            handshakeTimer?.cancel()
            handshake.fail(error)
            end(Ending(error: error), context: context)
            return nil
        case .deliver(let message):
            messages.yield(message)
            return nil
        case .sendFrame(let opcode, let data):
            return write(opcode, data, context: context)
        case .sendClose(let frame, let then):
            let written = write(.connectionClose, frame.payload(allocator: context.channel.allocator), context: context)
            switch then {
            case .awaitPeer:
                closeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(configuration.handshakeTimeout)) { [self] in
                    run(stateMachine.closeTimedOut())
                }
            case .finish(let ending):
                end(ending, context: context)
            }
            return written
        case .finish(let ending):
            end(ending, context: context)
            return nil
        }
    }

    private typealias Ending = GatewayWebSocketStateMachine.Ending

    private func write(_ opcode: WebSocketOpcode, _ data: ByteBuffer, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let frame = WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(NIOAny(frame), promise: promise)
        return promise.futureResult
    }

    /// Ends the connection: the messages finished (with the error, if any), the close reported, the channel closed.
    private func end(_ ending: Ending, context: ChannelHandlerContext) {
        handshakeTimer?.cancel()
        closeTimer?.cancel()
        if let error = ending.error { messages.finish(throwing: error) } else { messages.finish() }
        closed.succeed(ending.closeFrame)
        context.close(promise: nil)
    }
}
