import Foundation
import GatehouseProtocol
import GatehouseHTTP
import HTTPTypes
import NIOCore

/// KAAZING's emulated WebSocket (`wseb`): a create decided by the realm and answered once the upstream accepted, an
/// upstream body kept whole and handed to its session, a downstream's connection handed to the session.
extension GatewayHTTPHandler {
    // MARK: KAAZING's emulated WebSocket

    /// A request of KAAZING's emulated transport (``EmulationRequest``): a create is decided by the service's realm like
    /// any request and answered once the upstream accepted (``EmulatedWebSocket``); an upstream body and a downstream
    /// request go to their session (``EmulatedWebSockets``), wherever it lives; a downstream's connection becomes the
    /// session's once its head is written.
    func emulate(_ exchange: GatewayExchange, _ request: EmulationRequest) {
        guard let route = exchange.route else { return }
        let service = route.service
        exchange.enveloped = EmulationRequest.wantsEnvelope(exchange.head)
        switch request {
        case .create(let create):
            // Traced as any request: its admission below its span.
            if let tracer = gateway.tracer { startSpan(exchange, route: route, tracer: tracer) }
            guard service.allows(origin: EmulationRequest.origin(exchange.head)) else {
                let refusal = GatewayAnswer.forbidden(because: "pages of this origin may not open this service's WebSockets")
                answer(exchange, exchange.enveloped ? refusal.enveloped : refusal)
                return
            }
            exchange.fields = exchange.head.admissionFields(realm: service.realm)
            if let admission = gateway.admitNow(admissionRequest(exchange, query: route.target.query, service: service)) {
                emulationAdmitted(exchange, admission, create)
                return
            }
            admitOnTask(exchange, target: route.target, service: service) { handler, exchange, admission in
                handler.emulationAdmitted(exchange, admission, create)
            }
        case .upstream(let id, let sequence):
            guard let session = gateway.emulatedWebSockets.session(id) else {
                answer(exchange, .notFound)
                return
            }
            guard session.admits(origin: EmulationRequest.origin(exchange.head)) else {
                exchange.state.lastExchange()
                let refusal = GatewayAnswer.forbidden(because: "this emulated WebSocket belongs to a page of another origin")
                answer(exchange, exchange.enveloped ? refusal.enveloped : refusal)
                return
            }
            // A body of a bounded length, or chunks (KAAZING's Java client) bounded as they come.
            let limit = gateway.maxMessageSize * 2 + 1024
            switch exchange.head.head.framing {
            case .length(let length) where length <= limit:
                exchange.keptLimit = limit
            case .none, .chunked:  // `.none`: no body (the session refuses an empty upstream request)
                exchange.keptLimit = limit
            default:
                exchange.state.lastExchange()
                answer(exchange, GatewayAnswer.invalidRequest("an upstream body needs a Content-Length or chunks of at most \(limit) bytes",
                                                              status: 413))
                return
            }
            // The body is read whole here before the session decides: the client's reads go on until it is (a body
            // arriving in reads after its head's was never read on, issue 53).
            exchange.state.keepingBody()
            exchange.bodyRead = { handler, exchange in handler.emulatedUpstream(exchange, session: session, sequence: sequence) }
            // A body cut short (the client's connection closed or reset mid-body) ends the WebSocket, as KAAZING does.
            exchange.bodyAbandoned = { session.execute { $0.upstreamCutShort() } }
            if exchange.state.requestEnded {
                exchange.bodyRead = nil
                exchange.bodyAbandoned = nil
                emulatedUpstream(exchange, session: session, sequence: sequence)
            }
        case .downstream(let id, let sequence, let kilobytes):
            guard let session = gateway.emulatedWebSockets.session(id), let context else {
                answer(exchange, .notFound)
                return
            }
            guard session.admits(origin: EmulationRequest.origin(exchange.head)) else {
                let refusal = GatewayAnswer.forbidden(because: "this emulated WebSocket belongs to a page of another origin")
                answer(exchange, exchange.enveloped ? refusal.enveloped : refusal)
                return
            }
            exchange.state.deciding()
            let bound = NIOLoopBound((self, exchange), eventLoop: context.eventLoop)
            let loop = context.eventLoop
            session.execute { emulated in
                let refusal = emulated.downstreamRequested(sequence: sequence)
                loop.execute {
                    let (handler, exchange) = bound.value
                    handler.emulatedDownstream(exchange, session: session, refusal: refusal, kilobytes: kilobytes)
                }
            }
        }
    }

    /// The realm decided on a create: refused, its answer (in the envelope when asked); allowed, a session whose bridge
    /// connects upstream, the create answered when the upstream accepts or fails.
    func emulationAdmitted(_ exchange: GatewayExchange, _ admission: Gateway.Admission, _ create: EmulationRequest.Create) {
        guard self.exchange === exchange, !closing, let context, let route = exchange.route else { return }
        switch admission {
        case .answer(let refusal):
            answer(exchange, exchange.enveloped ? refusal.enveloped : refusal)
        case .allow(let subject):
            // The upstream gets the WebSocket's own target: the service's path, the query without KAAZING's parameters.
            let service = route.service
            let query = CredentialCarriers.query(route.target.query, removing: EmulationRequest.clientParameters)
            let remainder = create.remainder
            let target = RequestTarget(segments: service.segments + remainder.segments, trailingSlash: false, query: query)
            let webSocketRoute = GatewayRoute(text: target.description, target: target, service: service, remainder: remainder)
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, exchange), eventLoop: loop)
            let host = exchange.head.first("host") ?? "\(gateway.host):\(gateway.port)"
            let base = (gateway.tls == nil ? "http://" : "https://") + host + create.path + "/" + KaazingEmulation.marker + "/"
            let id = EmulatedWebSockets.newID()
            let extensions = KaazingExtensionsNegotiation(requested: exchange.head.values("x-websocket-extensions"),
                                                          inactivityTimeout: service.inactivityTimeout, emulated: true)
            let session = EmulatedWebSocket(
                id: id, eventLoop: loop, origin: EmulationRequest.origin(exchange.head), acceptsPings: create.acceptsPings,
                binary: create.binary, escaped: create.escaped, createSequence: create.sequence, maxMessageSize: gateway.maxMessageSize, logger: gateway.logger,
                registry: gateway.emulatedWebSockets
            ) { created in
                let (handler, exchange) = bound.value
                var answer: GatewayAnswer
                switch created {
                case .opened(let selected):
                    let segments = KaazingEmulation.sessionSegments(forCreate: create.segment)
                    let body = KaazingEmulation.createdBody(upstream: base + segments.upstream + "/" + id, downstream: base + segments.downstream + "/" + id)
                    answer = GatewayAnswer(status: .created, headers: [.contentType: "text/plain;charset=utf-8", .cacheControl: "no-store"],
                                           body: ByteBuffer(string: body))
                    answer.headers[HTTPField.Name("X-WebSocket-Version")!] = KaazingEmulation.version
                    if let selected { answer.headers[HTTPField.Name("X-WebSocket-Protocol")!] = selected }
                    for value in extensions.announced { answer.headers.append(HTTPField(name: HTTPField.Name(KaazingExtensions.emulatedField)!, value: value)) }
                    if let challenge = subject?.successChallenge { answer.headers[.wwwAuthenticate] = challenge }
                case .upstreamUnavailable:
                    answer = .badGateway
                }
                handler.answer(exchange, exchange.enveloped ? answer.enveloped : answer)
            }
            // The client as the gateway knows it (its address, or the one trusted proxies forwarded), whose half-open
            // sessions are bounded (issue 54, finding 6).
            let client = gateway.trustedProxies.client(peer: peer, fields: exchange.fields).address ?? "-"
            switch gateway.emulatedWebSockets.add(session, client: client) {
            case nil:
                break
            case .full?:
                answer(exchange, GatewayAnswer.unavailable("the gateway holds as many emulated WebSockets as it may"))  // 5xx: never enveloped
                return
            case .clientHoldsHalfOpen?:
                let refusal = GatewayAnswer.throttled("this client holds as many emulated WebSockets without a downstream as it may",
                                                      retryAfter: 1)
                answer(exchange, exchange.enveloped ? refusal.enveloped : refusal)
                return
            }
            let bridge = gateway.webSocketBridge(route: webSocketRoute, subject: subject, forwarding: forwarding(exchange), protocols: create.protocols,
                                                 eventLoop: loop, extensions: extensions, opening: { selected in
                                                     session.opened(selectedProtocol: selected)
                                                     return []
                                                 })
            exchange.state.connecting()
            session.start(bridge)
        }
    }

    /// An upstream body read whole: its frames go to the session (on its loop), the answer `200` or `400`.
    func emulatedUpstream(_ exchange: GatewayExchange, session: EmulatedWebSockets.Entry, sequence: UInt64?) {
        guard let context else { return }
        var read: [UInt8] = []
        for bytes in exchange.waiting { read += bytes.readableBytesView }
        exchange.waiting = []
        let body = read
        // The frames' bytes as they are when the body says so (`application/octet-stream`) or, without a type, on the
        // binary encoding; else text whose code points are the bytes (KAAZING's JavaScript client).
        let type = exchange.head.first("content-type")
        let bytes = type.map { HeaderText.equalsIgnoringCase(String($0.prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces),
                                                            KaazingEmulation.binaryDownstreamContentType) } ?? session.binary
        let bound = NIOLoopBound((self, exchange), eventLoop: context.eventLoop)
        let loop = context.eventLoop
        session.execute { emulated in
            let refusal = emulated.upstream(sequence: sequence, body: body, bytes: bytes)
            loop.execute {
                let (handler, exchange) = bound.value
                guard handler.exchange === exchange else { return }
                handler.answer(exchange, refusal.map { GatewayAnswer.invalidRequest($0.description) }
                               ?? GatewayAnswer(status: .ok, headers: [.cacheControl: "no-store"], body: ByteBuffer()))
            }
        }
    }

    /// A downstream request the session took (or refused, `400`): its head is written, and the connection leaves this
    /// handler for an ``EmulatedDownstreamHandler`` through which the session writes its frames until it ends it.
    func emulatedDownstream(_ exchange: GatewayExchange, session: EmulatedWebSockets.Entry, refusal: EmulatedWebSocket.Refusal?, kilobytes: Int?) {
        guard self.exchange === exchange, !closing, let context else { return }
        if let refusal {
            answer(exchange, GatewayAnswer.invalidRequest(refusal.description))
            return
        }
        exchange.status = 200
        exchange.state.answerBegun()
        if exchange.counted { count(exchange) }
        var head = allocator.buffer(capacity: 192)
        let type = session.binary ? KaazingEmulation.binaryDownstreamContentType : KaazingEmulation.downstreamContentType
        // `X-Accel-Buffering: no`: nginx in front hands each frame on as it comes (it buffers a proxied response by default).
        head.writeString("HTTP/1.1 200 OK\r\nContent-Type: \(type)\r\nX-Content-Type-Options: nosniff\r\n"
                         + "Cache-Control: no-store\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\n")
        context.writeAndFlush(wrapOutboundOut(head), promise: nil)
        machine.exchangeEnded()
        machine.handedOver()
        reader.end()
        idleTimer?.cancel()
        idleTimer = nil
        let operations = context.pipeline.syncOperations
        do {
            try operations.addHandler(EmulatedDownstreamHandler(session: session, kilobytes: kilobytes), position: .after(self))
            operations.removeHandler(context: context, promise: nil)
        } catch {
            context.close(promise: nil)
        }
    }
}
