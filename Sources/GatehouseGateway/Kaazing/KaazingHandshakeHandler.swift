import GatehouseHTTP
import GatehouseProtocol
import HTTPTypes
import NIOCore
import NIOWebSocket

/// A KAAZING client's WebSocket between the gateway's outer `101` (which selected `x-kaazing-handshake` and sent the
/// balancer frame) and the relay: it reads the client's HTTP request inside the WebSocket, has the service's realm
/// decide on it exactly as on a plain request (``Gateway/admitNow(_:)``, else the login chain on a
/// task: the same lockout, metrics and log), answers a challenge inside the WebSocket and reads the next request on
/// the same socket, and when the realm allows hands the connection to a ``WebSocketBridge`` that sends the inner
/// `101` once the upstream accepted. What it does is decided by ``KaazingHandshakeStateMachine``; this handler only
/// carries the actions out.
///
/// It stands behind NIO's frame encoder, in the place the bridge's frame reader and client side take when it leaves.
final class KaazingHandshakeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// What the relay needs from the outer upgrade.
    struct Upgrade {
        /// The upgrade's route, its target without KAAZING's `.kl` parameter (so neither its upstream target nor the
        /// relay's URL carries it).
        let route: GatewayRoute
        /// The outer request's fields: the request inside is read over them (KAAZING merges the two).
        let fields: HTTPFields
        let key: String
        let forwarding: ForwardingHeaders
        /// The client of the upgrade's connection and the upgrade's span: the inner requests are admitted as its.
        let client: ClientIdentity

        init(route: GatewayRoute, fields: HTTPFields, key: String, forwarding: ForwardingHeaders, client: ClientIdentity) {
            let target = route.target
            let withoutMark = RequestTarget(segments: target.segments, trailingSlash: target.trailingSlash,
                                            query: CredentialCarriers.query(target.query, removing: [KaazingHandshake.libraryParameter]))
            self.route = GatewayRoute(text: route.text, target: withoutMark, service: route.service, remainder: route.remainder)
            self.fields = fields
            self.key = key
            self.forwarding = forwarding
            self.client = client
        }

        var service: ProtectedService { route.service }
        var target: RequestTarget { route.target }
    }

    /// The outer answer to a KAAZING upgrade: `101` selecting `x-kaazing-handshake`, then the balancer's "no
    /// redirect" in a binary frame (this gateway is the one to talk to).
    static func switchingAnswer(key: String, allocator: ByteBufferAllocator) -> ByteBuffer {
        var answer = allocator.buffer(capacity: 256)
        answer.writeStaticString("HTTP/1.1 101 Web Socket Protocol Handshake\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ")
        answer.writeString(WebSocketAccept.value(forKey: key))
        answer.writeStaticString("\r\nSec-WebSocket-Protocol: ")
        answer.writeString(KaazingHandshake.protocolName)
        answer.writeStaticString("\r\n\r\n")
        answer.writeBytes([0x82, UInt8(KaazingHandshake.noRedirect.count)])
        answer.writeBytes(KaazingHandshake.noRedirect)
        return answer
    }

    private let gateway: Gateway
    private let upgrade: Upgrade
    private var machine: KaazingHandshakeStateMachine
    private var context: ChannelHandlerContext?
    /// Bytes read and not yet taken as frames (or, once decided, for the relay).
    private var buffer = ByteBuffer()
    private var reads = ReadGate()
    private var timer: Scheduled<Void>?
    /// The fields the realm last decided on: the upgrade's with the request's over them.
    private var decidedFields = HTTPFields()

    init(gateway: Gateway, upgrade: Upgrade) {
        self.gateway = gateway
        self.upgrade = upgrade
        machine = KaazingHandshakeStateMachine(path: upgrade.target.path)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        armTimer()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func read(context: ChannelHandlerContext) { reads.read(context) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        buffer.writeBuffer(&bytes)
        readFrames()
    }

    func channelInactive(context: ChannelHandlerContext) {
        machine.closed()
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            perform(machine.shuttingDown())
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        gateway.logger.debug("a KAAZING handshake failed", metadata: ["error": .string("\(error)")])
        context.close(promise: nil)
    }

    /// Takes the frames read so far, one at a time, until the machine waits for a decision.
    private func readFrames() {
        while case .reading = machine.state {
            let frame: WebSocketFrame?
            do {
                frame = try WebSocketFrameReader.next(&buffer, maxFrameSize: KaazingHandshake.maximumSize)
            } catch {
                perform(machine.frame(opcode: .connectionClose, fin: true, payload: []))
                return
            }
            guard let frame else { break }
            perform(machine.frame(opcode: frame.opcode, fin: frame.fin, payload: Array(frame.unmaskedData.readableBytesView)))
        }
        buffer.discardReadBytes()
    }

    private func perform(_ action: KaazingHandshakeStateMachine.Action) {
        guard let context else { return }
        switch action {
        case .none:
            break
        case .pong(let payload):
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: ByteBuffer(bytes: payload))), promise: nil)
        case .decide(let request):
            reads.pause()
            decide(request)
        case .answer(let response):
            write(response)
            context.flush()
            armTimer()
            reads.resume(context)
        case .answerAndClose(let response, let code):
            write(response)
            close(code, reason: "")
        case .close(let code, let reason):
            close(code, reason: reason)
        case .relay(let subject):
            relay(subject)
        }
    }

    /// The realm's decision on `request` read over the outer upgrade's fields: now when it can decide without
    /// suspending, else on a task, back on the event loop.
    private func decide(_ request: KaazingHandshake.Request) {
        guard let context else { return }
        let fields = Self.merged(outer: upgrade.fields, inner: request.fields)
        decidedFields = fields
        // The same request as every way in makes: the upgrade's client, certificate and span (``AdmissionRequest``).
        let request = AdmissionRequest(fields: fields, query: upgrade.target.query, service: upgrade.service, client: upgrade.client)
        if let admission = gateway.admitNow(request) {
            perform(machine.decided(admission))
            return
        }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let gateway = self.gateway
        Task {
            let admission = await gateway.admit(request)
            eventLoop.execute {
                let handler = bound.value
                handler.perform(handler.machine.decided(admission))
            }
        }
    }

    /// The fields the realm decides on: the outer upgrade's with the inner request's over them (KAAZING merges the
    /// two), except the forwarding family (`X-Forwarded-*`, `Forwarded`, `X-Real-IP`): who the client is comes only
    /// from the outer connection and its trusted proxy, which cannot see — let alone clean — what travels inside the
    /// WebSocket. An inner `X-Forwarded-For` replaced the proxy's own before, and with it the address the password
    /// checks are throttled by (issue 54, finding 2).
    static func merged(outer: HTTPFields, inner: [(name: String, value: String)]) -> HTTPFields {
        var fields = outer
        let inner = inner.filter { !ForwardingHeaders.isForwardingField($0.name.lowercased()) }
        for (name, _) in inner {
            guard let name = HTTPField.Name(name) else { continue }
            fields[values: name] = []
        }
        for (name, value) in inner where !value.isEmpty {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return fields
    }

    /// An answer inside the handshake: one binary frame, then the empty one that ends it.
    private func write(_ response: KaazingHandshake.Response) {
        guard let context else { return }
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: response.encoded))), promise: nil)
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer())), promise: nil)
    }

    private func close(_ code: WebSocketErrorCode, reason: String) {
        guard let context else { return }
        timer?.cancel()
        timer = nil
        var data = ByteBuffer()
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        // This side first (FIN), then the rest after a linger, reading meanwhile: closed at once while the client's
        // own close frame was unread, the kernel sent RST and the client could lose the refusal before it ("connection
        // reset by peer" instead of the 403, seen on a loaded machine).
        LingeringClose.answerAndClose(context, wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
        reads.resume(context)
    }

    private func armTimer() {
        timer?.cancel()
        guard let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(gateway.idleTimeout)) { [self] in
            timer = nil
            perform(machine.timedOut())
        }
    }

    /// Allowed: a ``WebSocketBridge`` to the upstream with the application's protocols, which writes the inner `101`
    /// (and the balancer frame again) when the upstream accepts; its frame reader and client side take this
    /// handler's place, with the bytes read past the request.
    private func relay(_ subject: Subject?) {
        guard let context else { return }
        timer?.cancel()
        timer = nil
        let upgrade = self.upgrade
        let service = upgrade.service
        // The application's protocols: the request's (it names them again), else the upgrade's after KAAZING's.
        let requested = decidedFields[values: .secWebSocketProtocol].flatMap(KaazingHandshake.protocols(in:))
            .filter { $0 != KaazingHandshake.protocolName }
        // KAAZING's extensions as the request asks for them (the inner request's `Sec-WebSocket-Extensions` over the
        // upgrade's), announced in the inner `101`.
        let extensions = KaazingExtensionsNegotiation(requested: decidedFields[values: .secWebSocketExtensions],
                                                      inactivityTimeout: service.inactivityTimeout)
        let bridge = gateway.webSocketBridge(
            route: upgrade.route, subject: subject, forwarding: upgrade.forwarding, protocols: requested, eventLoop: context.eventLoop,
            extensions: extensions,
            opening: { [key = upgrade.key, challenge = subject?.successChallenge] selected in
                let opening = KaazingHandshakeStateMachine.opening(key: key, selectedProtocol: selected, successChallenge: challenge,
                                                                   extensions: extensions)
                return [WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: opening.encoded)),
                        WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer()),
                        WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: KaazingHandshake.noRedirect))]
            })
        let operations = context.pipeline.syncOperations
        do {
            let side = WebSocketSideHandler(side: .client, bridge: bridge)
            let reader = WebSocketFrameReadingHandler(maxFrameSize: gateway.maxMessageSize, side: side)
            try operations.addHandler(reader, position: .after(self))
            try operations.addHandler(side, position: .after(reader))
            if buffer.readableBytes > 0 {
                let rest = buffer
                buffer = ByteBuffer()
                context.fireChannelRead(wrapInboundOut(rest))
                context.fireChannelReadComplete()
            }
            let channel = context.channel
            operations.removeHandler(context: context, promise: nil)
            // A read held while the realm decided goes from the tail, through the bridge's client side, which holds
            // it until the upstream is up.
            channel.read()
        } catch {
            gateway.logger.debug("could not relay a KAAZING WebSocket", metadata: ["error": .string("\(error)")])
            context.close(promise: nil)
        }
    }
}
