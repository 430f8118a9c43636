import GatehouseHTTP
import HTTPTypes
import Logging
import NIOCore

/// The relay: an admitted request's head rewritten for its upstream, the upstream connection (kept, pooled or fresh),
/// and the upstream's answer written to the client as it comes (``UpstreamExchange``).
extension GatewayHTTPHandler {
    func admitted(_ exchange: GatewayExchange, _ admission: Gateway.Admission) {
        guard self.exchange === exchange, !closing, let route = exchange.route else { return }
        switch admission {
        case .answer(let refusal):
            answer(exchange, refusal)
        case .allow(let subject):
            if let user = subject?.name, !UpstreamRequestHead.isValidFieldValue(user) {
                gateway.logger.warning("a user name with a control character cannot be sent upstream", metadata: ["service": .string(exchange.service)])
                answer(exchange, GatewayAnswer.serverError("the authenticated user's name cannot be sent upstream"))
                return
            }
            exchange.successChallenge = subject?.successChallenge
            if exchange.head.isForTheGatewayItself {
                // Admitted, and answered here: `OPTIONS` with `Max-Forwards: 0` is not forwarded (RFC 9110 §7.6.2).
                var admitted = GatewayAnswer(status: .ok, headers: [.allow: GatewayRequestPolicy.relayedMethods], body: ByteBuffer())
                if let challenge = subject?.successChallenge { admitted.headers[.wwwAuthenticate] = challenge }
                answer(exchange, admitted)
                return
            }
            let forwarding = forwarding(exchange)
            let base = route.service.base
            exchange.upstreamHead = UpstreamRequestHead.make(
                from: exchange.head, target: route.upstreamTarget,
                authority: base.authority, realm: route.service.realm, forwarding: forwarding, user: subject?.name,
                traceParent: startUpstreamSpan(exchange, route: route), allocator: allocator)
            connect(exchange, fresh: false)
        }
    }

    /// The forwarding fields of `exchange`. They depend only on its `Host` when the peer is not a trusted proxy:
    /// the last ones are kept for the connection's next request.
    func forwarding(_ exchange: GatewayExchange) -> ForwardingHeaders {
        if !peerIsTrusted, let lastForwarding, exchange.head.first("host", is: lastForwarding.host) { return lastForwarding.fields }
        let host = exchange.head.first("host")
        if exchange.fieldsPending {
            exchange.fieldsPending = false
            exchange.fields = exchange.head.admissionFields(realm: exchange.route?.service.realm)
        }
        let fields = ForwardingHeaders(headers: exchange.fields, host: host, peer: peer, trusted: gateway.trustedProxies,
                                       proto: gateway.tls == nil ? "http" : "https")
        if !peerIsTrusted { lastForwarding = (host, fields) }
        return fields
    }

    func connect(_ exchange: GatewayExchange, fresh: Bool) {
        guard let pool, let service = exchange.route?.service else { return }
        exchange.state.connecting()
        let key = service.upstreamKey
        if let kept = keptUpstream {
            keptUpstream = nil
            if !fresh, kept.key == key, kept.handler.isActive {
                attach(exchange, to: kept)
                return
            }
            pool.release(kept)
        }
        pool.acquire(key, fresh: fresh) { [self] result in
            guard self.exchange === exchange, !closing, exchange.state.phase == .connecting else {
                // The exchange ended meanwhile. A connection that never carried a request is not kept: an upstream
                // waits for a first request on it before its graceful shutdown can close it (Hummingbird's
                // WebSocket upgrade channel does), and would wait out the pool's idle lifetime.
                if case .success(let connection) = result {
                    if connection.exchanges == 0 { connection.close() } else { pool.release(connection) }
                }
                return
            }
            switch result {
            case .failure(let error):
                upstreamUnavailable(exchange, error: "\(error)")
            case .success(let connection):
                attach(exchange, to: connection)
            }
        }
    }

    func attach(_ exchange: GatewayExchange, to upstream: UpstreamConnection) {
        guard let head = exchange.upstreamHead else { return }
        exchange.upstream = upstream
        exchange.state.attached(reused: upstream.exchanges > 0)
        upstream.exchanges += 1
        upstream.handler.exchange = self
        upstream.handler.requestWasHEAD = exchange.head.method == .head
        upstream.handler.dechunk = exchange.head.minorVersion == 0
        upstream.write(head)
        let waiting = exchange.waiting
        exchange.waiting = []
        for bytes in waiting { forward(bytes, ended: false, of: exchange, to: upstream) }
        upstream.flush()
        _ = machine.flushDue(toClient: false)
        if !machine.clientWritable { upstream.handler.pauseReads() }
        resumeReadsIfPossible()
    }

    /// The upstream could not be reached or dropped the request before answering: `502` (or `400` when the
    /// client's own body failed).
    func upstreamUnavailable(_ exchange: GatewayExchange, error: String) {
        if exchange.state.bodyFailed {
            gateway.warnUpstreamFailure(service: exchange.service, error: error)
            answer(exchange, GatewayAnswer.invalidRequest("the request body is malformed or incomplete"))
            return
        }
        gateway.upstreamFailed(service: exchange.service, protocol: "http", error: error)
        answer(exchange, .badGateway)
    }

    // MARK: The upstream's side

    func upstreamHead(_ head: HTTPMessageHead, bytes: ByteBuffer) {
        guard let exchange, exchange.state.phase == .relaying, exchange.upstream != nil, let context,
              case .response(let status) = head.startLine else { return }
        exchange.status = status
        let tokens = UpstreamRequestHead.connectionTokens(head, bytes: bytes)
        let http10 = exchange.head.minorVersion == 0
        exchange.state.answerStarted(endsByClose: head.framing == .untilClose, lengthKnown: head.hasContentLength, clientIsHTTP10: http10,
                                     upstreamKeepsAlive: UpstreamRequestHead.keepsAlive(head, tokens: tokens))
        var smallBody = 0
        if case .length(let length) = head.framing, length <= Self.inlineAnswerBody { smallBody = length }
        let response = UpstreamRequestHead.response(head, bytes: bytes, tokens: tokens, clientMinorVersion: http10 ? 0 : 1,
                                                    challenge: exchange.successChallenge,
                                                    close: machine.closesAfter(keepAlive: exchange.state.keepAlive), keepTransferEncoding: !http10,
                                                    reserving: smallBody, allocator: allocator)
        if smallBody > 0 {
            machine.holdAnswerHead(response)
        } else {
            context.write(wrapOutboundOut(response), promise: nil)
            machine.wrote(toClient: true)
        }
    }

    /// The largest body that joins its answer's head in one buffer (a copy of a few bytes is cheaper than a second
    /// buffer in the socket's write).
    static let inlineAnswerBody = 2048

    func upstreamBody(_ bytes: ByteBuffer) {
        guard let exchange, exchange.state.phase == .relaying, let upstream = exchange.upstream, let context else { return }
        if var head = machine.takeHeldAnswerHead() {
            var bytes = bytes
            head.writeBuffer(&bytes)
            context.write(wrapOutboundOut(head), promise: nil)
        } else {
            context.write(wrapOutboundOut(bytes), promise: nil)
        }
        machine.wrote(toClient: true)
        if !machine.clientWritable { upstream.handler.pauseReads() }
    }

    func upstreamEnd(reusable: Bool) {
        guard let exchange, exchange.state.phase == .relaying, exchange.upstream != nil, let context else { return }
        exchange.state.upstreamAnswerEnded(reusable: reusable)
        writeHeldAnswerHead(context)
        _ = machine.flushDue(toClient: true)  // flushed below
        if machine.closesAfter(keepAlive: exchange.state.keepAlive) {
            // The close waits for the answer's last bytes to be written.
            responseDone(exchange, written: context.writeAndFlush(wrapOutboundOut(allocator.buffer(capacity: 0))))
        } else {
            context.flush()
            responseDone(exchange, written: nil)
        }
    }

    func upstreamReadComplete() {
        guard let context else { return }
        writeHeldAnswerHead(context)
        if machine.flushDue(toClient: true) { context.flush() }
    }

    /// Writes an answer's head held for its body (``GatewayConnectionStateMachine/holdAnswerHead(_:)``), when the
    /// body did not come with it.
    func writeHeldAnswerHead(_ context: ChannelHandlerContext) {
        guard let head = machine.takeHeldAnswerHead() else { return }
        context.write(wrapOutboundOut(head), promise: nil)
        machine.wrote(toClient: true)
    }

    func upstreamWritabilityChanged() {
        resumeReadsIfPossible()
    }

    func upstreamFailed(timedOut: Bool) {
        guard let exchange, exchange.state.phase == .relaying, exchange.upstream != nil else { return }
        exchange.upstream = nil
        switch exchange.state.upstreamFailed(timedOut: timedOut) {
        case .gatewayTimeout:
            gateway.upstreamFailed(service: exchange.service, protocol: "http", error: "no answer within the upstream read timeout",
                                   answered: "answered 504")
            answer(exchange, .gatewayTimeout)
        case .retry:
            exchange.waiting = []
            connect(exchange, fresh: true)
        case .unavailable:
            upstreamUnavailable(exchange, error: "the upstream closed the connection before answering")
        case .cutOff:
            gateway.upstreamFailed(service: exchange.service, protocol: "http", error: nil, answered: "the answer was cut off, the client's connection closed")
            count(exchange)
            machine.exchangeEnded()
            close()
        }
    }
}
