import Crypto
import Foundation
import GatehouseProtocol
import NIOCore
import NIOWebSocket

/// A connection's first request asking for a WebSocket: the realm's decision, the `101`, and the connection handed to a
/// ``WebSocketBridge`` or to KAAZING's extended handshake (``KaazingHandshakeHandler``).
extension GatewayHTTPHandler {
    /// A connection's first request asking for `Upgrade: websocket` (``GatewayRequestPolicy/webSocketUpgrade(_:to:)``):
    /// a handshake to a WebSocket service is decided by its realm (KAAZING's extended handshake inside the WebSocket)
    /// and, allowed, relayed on the event loop by a ``WebSocketBridge``; refused with the realm's `401`/`403`, a
    /// malformed handshake with `400`/`426`, and closed. `false`: not an upgrade the gateway switches to, answered as a
    /// plain request.
    func beginWebSocket(_ exchange: GatewayExchange) -> Bool {
        let head = exchange.head
        guard let target = try? RequestTarget(parsing: head.target) else { return false }
        let routed = gateway.route(target)
        let key: String
        switch GatewayRequestPolicy.webSocketUpgrade(head, to: routed?.0) {
        case .plain:
            return false
        case .refused(let status, let description):
            gateway.logger.debug("refused a WebSocket handshake", metadata: ["reason": .string(description)])
            exchange.service = routed?.0.name ?? "none"
            exchange.state.lastExchange()
            answer(exchange, GatewayRequestPolicy.answer(status, description))
            return true
        case .handshake(let clientKey):
            key = clientKey
        }
        guard let (service, remainder) = routed else { return false }
        exchange.service = service.name
        exchange.counted = false  // an upgrade is not an HTTP request of the metrics, accepted or not
        exchange.state.lastExchange()
        exchange.route = GatewayRoute(text: head.target, target: target, service: service, remainder: remainder)
        // Traced as any request: its admission (KAAZING's, inside the WebSocket, too) below its span.
        if let tracer = gateway.tracer, let route = exchange.route { startSpan(exchange, route: route, tracer: tracer) }
        exchange.fields = head.allFields
        guard service.allows(origin: head.first("origin")) else {
            answer(exchange, GatewayAnswer.forbidden(because: "pages of this origin may not open this service's WebSockets"))
            return true
        }
        if KaazingHandshake.isRequested(byProtocolFields: head.values("sec-websocket-protocol")) {
            startKaazingHandshake(exchange, key: key)
            return true
        }
        if let admission = gateway.admitNow(admissionRequest(exchange, query: target.query, service: service)) {
            webSocketAdmitted(exchange, admission, key: key)
            return true
        }
        admitOnTask(exchange, target: target, service: service) { handler, exchange, admission in
            handler.webSocketAdmitted(exchange, admission, key: key)
        }
        return true
    }

    func webSocketAdmitted(_ exchange: GatewayExchange, _ admission: Gateway.Admission, key: String) {
        guard self.exchange === exchange, !closing, let context, let route = exchange.route else { return }
        switch admission {
        case .answer(let refusal) where refusal.status.code == 401 && route.service.realm?.scheme == .applicationToken
            && exchange.head.first("origin") != nil:
            // A browser's plain upgrade (it sends `Origin`) cannot answer an `Application Token` challenge (only
            // KAAZING's client, through its extended handshake, can): `403`, as KAAZING Gateway answers it. A token the
            // upgrade carries still admits; a client without `Origin` (Gatehouse's SDK) is challenged and answers.
            answer(exchange, GatewayAnswer.forbidden(because: "an Application Token realm admits a plain WebSocket only with its token"))
        case .answer(let refusal):
            answer(exchange, refusal)
        case .allow(let subject):
            var answer = allocator.buffer(capacity: 256)
            answer.writeStaticString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: ")
            answer.writeString(WebSocketAccept.value(forKey: key))
            if let challenge = subject?.successChallenge {
                answer.writeStaticString("\r\nWWW-Authenticate: ")
                answer.writeString(challenge)
            }
            let extensions = KaazingExtensionsNegotiation(requested: exchange.head.values("sec-websocket-extensions"),
                                                          inactivityTimeout: route.service.inactivityTimeout)
            for value in extensions.announced {
                answer.writeStaticString("\r\nSec-WebSocket-Extensions: ")
                answer.writeString(value)
            }
            answer.writeStaticString("\r\n\r\n")
            let bridge = gateway.webSocketBridge(route: route, subject: subject, forwarding: forwarding(exchange), eventLoop: context.eventLoop,
                                                 extensions: extensions)
            upgraded(context, exchange, answer: answer) { [gateway] operations, encoder in
                // The side is added last: it writes a frame as it came from the encoder's place. One at a time:
                // `addHandlers` at `.after` adds the last one first.
                let side = WebSocketSideHandler(side: .client, bridge: bridge)
                let reader = WebSocketFrameReadingHandler(maxFrameSize: gateway.maxMessageSize, side: side)
                try operations.addHandler(reader, position: .after(encoder))
                try operations.addHandler(side, position: .after(reader))
            }
        }
    }

    /// Writes `answer` (a `101`, and what follows it) and hands the connection to what `addHandlers` puts behind
    /// NIO's frame encoder (``switchToWebSocket(_:addHandlers:)``), out of this handler's read before it is removed;
    /// what the client sends meanwhile is kept (`upgrading`).
    func upgraded(
        _ context: ChannelHandlerContext, _ exchange: GatewayExchange, answer: ByteBuffer,
        addHandlers: @escaping (ChannelPipeline.SynchronousOperations, WebSocketFrameEncoder) throws -> Void
    ) {
        context.writeAndFlush(wrapOutboundOut(answer), promise: nil)
        exchange.status = 101
        endSpans(exchange)
        machine.exchangeEnded()
        machine.upgrading()
        idleTimer?.cancel()
        idleTimer = nil
        context.eventLoop.assumeIsolated().execute { [self] in
            switchToWebSocket(context, addHandlers: addHandlers)
        }
    }

    /// A KAAZING client's upgrade (``KaazingHandshake``), on any WebSocket service: `101` selecting
    /// `x-kaazing-handshake` and the balancer frame at once, then a ``KaazingHandshakeHandler`` (behind NIO's frame
    /// encoder) in this handler's place, which has the realm decide on the request inside the WebSocket.
    func startKaazingHandshake(_ exchange: GatewayExchange, key: String) {
        guard let context, let route = exchange.route else { return }
        let upgrade = KaazingHandshakeHandler.Upgrade(route: route, fields: exchange.fields, key: key, forwarding: forwarding(exchange),
                                                      client: clientIdentity(exchange))
        let handshake = KaazingHandshakeHandler(gateway: gateway, upgrade: upgrade)
        upgraded(context, exchange, answer: KaazingHandshakeHandler.switchingAnswer(key: key, allocator: allocator)) { operations, encoder in
            try operations.addHandler(handshake, position: .after(encoder))
        }
    }

    /// The connection's pipeline after a `101`: NIO's WebSocket frame encoder and what `addHandlers` puts behind it
    /// (the frames' reader and a bridge's client side, or KAAZING's handshake) in place of this handler. Frames the
    /// client sent right behind its request go to what was added.
    func switchToWebSocket(
        _ context: ChannelHandlerContext,
        addHandlers: (ChannelPipeline.SynchronousOperations, WebSocketFrameEncoder) throws -> Void
    ) {
        let operations = context.pipeline.syncOperations
        do {
            // Socket side first: the encoder must see what is written behind it.
            let encoder = WebSocketFrameEncoder()
            try operations.addHandler(encoder, position: .after(self))
            try addHandlers(operations, encoder)
            let channel = context.channel
            let readHeld = machine.handedOver()
            if let rest = reader.takePending() {
                context.fireChannelRead(wrapInboundOut(rest))
                context.fireChannelReadComplete()
            }
            operations.removeHandler(context: context, promise: nil)
            if readHeld {
                // From the tail, through the bridge's client side, which holds it until the upstream is up.
                channel.read()
            }
        } catch {
            gateway.logger.debug("could not switch a connection to WebSocket", metadata: ["error": .string("\(error)")])
            context.close(promise: nil)
        }
    }
}
