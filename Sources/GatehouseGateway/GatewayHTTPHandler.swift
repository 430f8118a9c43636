// One file on purpose (about 1,300 lines; its split into a connection machine is issue 56): a channel handler is one state machine — the bytes read, the exchange in
// flight and its phase, the held reads, the kept upstream connection and route, the head and idle timers, and the
// hand-over to a WebSocket bridge, KAAZING's handshake or an emulated WebSocket's downstream — whose state is private
// to it; split across files it would have to be made internal to the module. What is not that state lives apart:
// `GatewayConnectionStateMachine` (the connection's life and timers, decided apart from the socket),
// `GatewayExchangeStateMachine` (an exchange's phase and the decisions on its messages and connections),
// `GatewayRequestPolicy` (what the gateway answers itself), `GatewayHTTPHandler+Exchange` (an exchange and its route),
// `ClientRequestHead` (a request read in place), `UpstreamRequestHead` and `HeadBytesWriter` (header rules, heads as
// bytes), `GatewayAnswer+Bytes`, `UpstreamConnectionPool`, `UpstreamConnection` and `UpstreamResponseHandler`
// (upstream side), `WebSocketBridge` (after an upgrade), `KaazingHandshakeHandler` (KAAZING's upgrade).

import Crypto
import Foundation
import GatehouseProtocol
import GatehouseHTTP
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket

/// The gateway's plain HTTP, on the connection's event loop: each request is read in place from the client's bytes
/// (``HTTPMessageHead``, ``ChunkedBodyScanner``), routed, admitted and relayed to its upstream over a keep-alive
/// connection of the loop's ``UpstreamConnectionPool``: its head rewritten as bytes, its body's bytes as they came
/// (chunks included), the answer's bytes to the client as they come (``UpstreamResponseHandler`` reads them; only the
/// answer's head is rewritten) — no task, no copy of a body, no HTTP codec objects.
///
/// It is the gateway's only request path (``GatewayChannel``: TLS, then this handler): every request of a connection
/// is read and answered here. A request it cannot read it refuses (`400`; `431` for a head over
/// ``RequestHeadLimits``; `408` for a head not whole in time) and closes the connection. What it answers itself, before
/// a realm, is ``GatewayRequestPolicy``'s decision. Admission runs here
/// when the realm decides without suspending (no realm, no credentials, or credentials its login modules remember:
/// ``Gateway/admitNow(headers:query:to:)``); otherwise the login chain runs on a task (bcrypt, token introspection,
/// Kerberos) and the exchange goes on on the loop when it answers, the client's reads held meanwhile.
///
/// A connection's first request may be a WebSocket handshake: allowed, it is answered `101` and the handler leaves the
/// pipeline to a ``WebSocketBridge`` (or to KAAZING's handshake). A WebSocket upgrade on a
/// connection already used for HTTP is redirected (`307` to its normalised target, `400` for a malformed one). One
/// exchange at a time: pipelined requests wait, unread, until the answer before them is
/// complete. Bodies stream both ways with backpressure: the client's reads stop while the upstream socket is full,
/// the upstream's while the client's is. `Connection: close`, HTTP/1.0, the idle
/// timeout (between requests, or while a request's body stalls), graceful shutdown (`ChannelShouldQuiesceEvent`:
/// closed when idle, or after the answer in progress) and empty lines before a request line ignored, as Hummingbird does.
final class GatewayHTTPHandler: ChannelDuplexHandler, RemovableChannelHandler, UpstreamExchange {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer


    /// What the client's next bytes are.
    private enum Reading {
        /// A request head (or empty lines before one).
        case head
        /// This many more bytes of the current request's body.
        case body(remaining: Int)
        /// The current request's chunked body.
        case chunked(ChunkedBodyScanner)
        /// Nothing more: the connection ends.
        case done
    }

    let gateway: Gateway
    private let policy: GatewayRequestPolicy
    /// The connection's life and timers: serving, upgrading, handed over or closing; graceful shutdown; the head and
    /// idle deadlines.
    private var machine: GatewayConnectionStateMachine
    private var context: ChannelHandlerContext?
    private var pool: UpstreamConnectionPool?
    /// Bytes read but not yet taken (the rest of a head, a pipelined request).
    private var inbound: ByteBuffer?
    private var reading = Reading.head
    private var exchange: Exchange?
    /// A `read` held back while the current exchange cannot take more.
    private var readHeld = false
    /// Switching to a WebSocket, or handed to what serves the connection after an upgrade or an emulated downstream.
    private var removed: Bool { machine.state == .upgrading || machine.state == .handedOver }
    private var closing: Bool { machine.state == .closing }
    private var processing = false
    private var upstreamFlushPending = false
    /// Something was written to the client since its last flush.
    private var clientFlushPending = false
    /// An answer's head held back for the first bytes of its body, when that is small: one buffer, one write.
    private var heldAnswerHead: ByteBuffer?
    /// The channel's allocator and whether its socket takes more now (kept from `channelWritabilityChanged`): read
    /// several times a request, and `context.channel` costs a retain and a release each time.
    private var allocator = ByteBufferAllocator()
    private var clientWritable = true
    private var idleTimer: Scheduled<Void>?
    /// The connection's event loop, whose clock the timers follow (an `EmbeddedEventLoop`'s in tests).
    private var eventLoop: (any EventLoop)?
    private var now: NIODeadline { eventLoop?.now ?? .now() }
    /// The client's address, and whether it is a trusted proxy (``TrustedProxies``).
    lazy var peer = context?.channel.remoteAddress?.ipAddress
    /// The `x5t#S256` of the client certificate this TLS connection presented, when the gateway asks for them.
    lazy var certificateThumbprint: String? = {
        guard gateway.clientCertificates, let context,
              let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self).peerCertificate,
              let der = try? certificate.toDERBytes() else { return nil }
        return CertificateThumbprint.sha256(der: der)
    }()
    lazy var peerIsTrusted = gateway.trustedProxies.contains(peer)
    /// The forwarding fields of the last request from a peer that is not a trusted proxy, and its `Host`.
    private var lastForwarding: (host: String?, fields: ForwardingHeaders)?
    /// The last admission by remembered credentials (`Basic`, a token) on this connection, to admit the next request
    /// with the same `Authorization` without asking the login chain again.
    private var remembered: RememberedAdmission?
    /// The connection's last route: a client asking for the same target again (polling, a health check, a load) is
    /// routed by comparing its bytes, without parsing and routing it again (routes depend on the target alone).
    private var lastRoute: Route?
    /// The upstream connection of the last exchange, kept for the next request while the client's connection lives
    /// (``keep(_:)``); back to the loop's pool when it ends.
    private var keptUpstream: UpstreamConnection?
    /// The request metrics the last exchange was counted with.
    private var lastMetrics: (service: String, status: Int, handles: KeyedMetricHandles<GatewayStatistics.RequestKey>.Handles)?

    init(gateway: Gateway) {
        self.gateway = gateway
        self.policy = GatewayRequestPolicy(gateway: gateway)
        self.machine = GatewayConnectionStateMachine(idleTimeout: TimeAmount(gateway.idleTimeout), headTimeout: TimeAmount(gateway.headerReadTimeout),
                                                     now: .uptimeNanoseconds(0))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        allocator = context.channel.allocator
        clientWritable = context.channel.isWritable
        pool = gateway.upstreamPools.pool(for: context.eventLoop)
        eventLoop = context.eventLoop
        if context.channel.isActive { firstHeadDue(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        firstHeadDue(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
        if let exchange { abandon(exchange) }
        releaseKeptUpstream()
        self.context = nil
    }

    // MARK: The client's side

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch machine.state {
        case .serving: break
        case .upgrading:
            append(unwrapInboundIn(data))
            return
        case .handedOver:
            context.fireChannelRead(data)
            return
        case .closing:
            return
        }
        machine.read(now: now)
        append(unwrapInboundIn(data))
        startNext()
    }

    private func append(_ bytes: ByteBuffer) {
        guard var buffer = inbound, buffer.readableBytes > 0 else {
            inbound = bytes
            return
        }
        inbound = nil
        var bytes = bytes
        buffer.writeBuffer(&bytes)
        inbound = buffer
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if removed {
            context.fireChannelReadComplete()
            return
        }
        if upstreamFlushPending {
            upstreamFlushPending = false
            exchange?.upstream?.flush()
        }
    }

    func read(context: ChannelHandlerContext) {
        if holdReads {
            readHeld = true
        } else {
            context.read()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        clientWritable = context.channel.isWritable
        if clientWritable { exchange?.upstream?.handler.resumeReads() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        _ = machine.close()
        idleTimer?.cancel()
        idleTimer = nil
        if let exchange { abandon(exchange) }
        releaseKeptUpstream()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !removed else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if event is ChannelShouldQuiesceEvent {
            // Graceful shutdown: close now when idle, else after the answer in progress (`Connection: close`).
            if machine.quiesce(exchangeUnderWay: exchange != nil) { close() }
            return
        }
        if let event = event as? ChannelEvent, event == .inputClosed {
            // The client sent its last byte: answer what is under way, then close; a body cut short is the client's
            // fault (`400` if nothing was answered yet).
            switch machine.inputClosed(progress) {
            case .close: close()
            case .lastExchange: exchange?.state.lastExchange()
            case .bodyCutShort: bodyFailed()
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !removed, !closing else {
            context.fireErrorCaught(error)
            return
        }
        close()
    }

    // MARK: Exchanges

    /// Whether the client's socket must not be read now: an exchange waits for admission or an upstream, its
    /// upstream socket is full, or a pipelined request already waits its turn. A complete request whose answer is
    /// awaited does not stop the reads by itself: stopping and resuming them would cost two `epoll_ctl` calls per
    /// request, and a client rarely pipelines (what it sends meanwhile is kept, unread, and then the reads stop).
    private var holdReads: Bool {
        guard !removed, !closing, let exchange else { return false }
        return exchange.state.holdsReads(pipelined: (inbound?.readableBytes ?? 0) > 0, upstreamWritable: exchange.upstream?.isWritable ?? true)
    }

    /// Where the exchange under way is, for the machine's timers and the client's end of input.
    private var progress: GatewayConnectionStateMachine.ExchangeProgress {
        exchange?.state.progress ?? .none
    }

    private func resumeReadsIfPossible() {
        guard readHeld, !holdReads, let context else { return }
        readHeld = false
        context.read()
    }

    /// Starts the exchanges of the requests read, one at a time.
    private func startNext() {
        process()
        if exchange == nil, !closing, !removed { armIdleTimer() }
        resumeReadsIfPossible()
    }

    /// Reads what the client sent: request heads, each starting an exchange once the one before it has ended, and
    /// the current request's body.
    private func process() {
        guard !processing else { return }
        processing = true
        defer { processing = false }
        while !closing, !removed, var buffer = inbound, buffer.readableBytes > 0 {
            inbound = nil
            switch reading {
            case .head:
                guard exchange == nil else {
                    // A pipelined request: it waits, unread, for the answer before it.
                    inbound = buffer
                    return
                }
                // Empty lines before a request line are ignored (RFC 9112 §2.2).
                let blank = buffer.withUnsafeReadableBytes { raw in raw.prefix { $0 == 0x0D || $0 == 0x0A }.count }
                buffer.moveReaderIndex(forwardBy: blank)
                guard buffer.readableBytes > 0 else { continue }
                let parsed: HTTPMessageHead?
                do {
                    parsed = try buffer.withUnsafeReadableBytes { raw throws(HTTPHeadError) in try HTTPMessageHead.parse(raw, kind: .request) }
                } catch {
                    refuse(error)
                    return
                }
                guard let parsed else {
                    inbound = buffer
                    headArriving()
                    return
                }
                let head = buffer.readSlice(length: parsed.length)!
                if buffer.readableBytes > 0 { inbound = buffer }
                switch parsed.framing {
                case .length(let length): reading = .body(remaining: length)
                case .chunked: reading = .chunked(ChunkedBodyScanner())
                case .none, .untilClose: reading = .head
                }
                begin(ClientRequestHead(bytes: head, head: parsed))
            case .body(let remaining):
                let count = min(remaining, buffer.readableBytes)
                let body = buffer.readSlice(length: count)!
                if buffer.readableBytes > 0 { inbound = buffer }
                reading = count == remaining ? .head : .body(remaining: remaining - count)
                if let exchange { take(body, ended: count == remaining, into: exchange) }
            case .chunked(var scanner):
                let count: Int
                // A body the gateway keeps itself (KAAZING's emulated upstream) is taken without its chunks' framing.
                let dechunk = exchange?.bodyRead != nil
                var data: [Range<Int>] = []
                do {
                    count = try buffer.withUnsafeReadableBytes { raw throws(HTTPHeadError) in
                        dechunk ? try scanner.scan(raw) { data.append($0) } : try scanner.scan(raw)
                    }
                } catch {
                    bodyFailed()
                    return
                }
                var body = buffer.readSlice(length: count)!
                if dechunk {
                    var dechunked = allocator.buffer(capacity: data.reduce(0) { $0 + $1.count })
                    for range in data {
                        var piece = body.getSlice(at: body.readerIndex + range.lowerBound, length: range.count)!
                        dechunked.writeBuffer(&piece)
                    }
                    body = dechunked
                }
                if buffer.readableBytes > 0 { inbound = buffer }
                reading = scanner.isComplete ? .head : .chunked(scanner)
                if let exchange { take(body, ended: scanner.isComplete, into: exchange) }
            case .done:
                return
            }
        }
    }

    /// A request the gateway cannot read: `400` (`431` for a head over ``RequestHeadLimits``), and the connection ends.
    private func refuse(_ error: HTTPHeadError) {
        guard let context else { return }
        gateway.logger.debug("refused a request", metadata: ["reason": .string(error.description)])
        let refusal = error.tooLarge
            ? GatewayAnswer.invalidRequest("the request head is larger than the gateway accepts", status: 431)
            : GatewayAnswer.invalidRequest("the request is not a valid HTTP/1.1 request")
        // Counted as a request no service matched: an operator sees malformed and oversized heads in the scrape.
        gateway.statistics.request(service: "none", status: error.tooLarge ? 431 : 400, duration: .nanoseconds((now - machine.lastActivity).nanoseconds))
        reading = .done
        inbound = nil
        _ = machine.close()
        idleTimer?.cancel()
        idleTimer = nil
        LingeringClose.answerAndClose(context, wrapOutboundOut(refusal.bytes(minorVersion: 1, close: true, withBody: true,
                                                                           allocator: allocator)))
    }

    /// The client framed its body wrongly: its fault, `400`, and the connection ends.
    private func bodyFailed() {
        reading = .done
        inbound = nil
        guard let exchange else {
            close()
            return
        }
        bodyCutShort(exchange)
        let decision = exchange.state.bodyMalformed()
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            upstream.close()
        }
        switch decision {
        case .close: close()
        case .answer: answer(exchange, GatewayAnswer.invalidRequest("the request body is malformed or incomplete"))
        }
    }

    /// The body the gateway was keeping for itself will not come whole: whoever waited for it is told.
    private func bodyCutShort(_ exchange: Exchange) {
        guard exchange.bodyRead != nil else { return }
        exchange.bodyRead = nil
        let abandoned = exchange.bodyAbandoned
        exchange.bodyAbandoned = nil
        abandoned?()
    }

    /// A piece of the current request's body (`ended`: its last).
    private func take(_ bytes: ByteBuffer, ended: Bool, into exchange: Exchange) {
        if let bodyRead = exchange.bodyRead {
            exchange.state.bodyKept(ended: ended)
            // An emulated WebSocket's upstream body: kept whole (bounded when it began, or as its chunks come), then
            // handed over.
            exchange.keptBytes += bytes.readableBytes
            guard exchange.keptBytes <= exchange.keptLimit else {
                exchange.bodyRead = nil
                exchange.waiting = []
                exchange.state.lastExchange()
                answer(exchange, GatewayAnswer.invalidRequest("an upstream body of more than \(exchange.keptLimit) bytes", status: 413))
                return
            }
            if bytes.readableBytes > 0 { exchange.waiting.append(bytes) }
            if ended {
                exchange.bodyRead = nil
                exchange.bodyAbandoned = nil
                bodyRead(self, exchange)
            }
            return
        }
        switch exchange.state.bodyRead(ended: ended) {
        case .forward:
            if let upstream = exchange.upstream { forward(bytes, ended: ended, of: exchange, to: upstream) }
        case .hold:
            if bytes.readableBytes > 0 { exchange.waiting.append(bytes) }
        case .drop:
            break
        }
        if exchange.state.requestEnded { finishIfDone(exchange) }
    }

    private func forward(_ bytes: ByteBuffer, ended: Bool, of exchange: Exchange, to upstream: UpstreamConnection) {
        if bytes.readableBytes > 0 {
            upstream.write(bytes)
            upstreamFlushPending = true
        }
        if ended {
            upstream.flush()
            upstreamFlushPending = false
        }
    }

    private func begin(_ head: ClientRequestHead) {
        let (keepAlive, first) = machine.headRead(keepAlive: head.isKeepAlive)
        let bodiless = if case .head = reading { true } else { false }
        let exchange = Exchange(head: head, keepAlive: keepAlive, requestEnded: bodiless, start: machine.lastActivity)
        self.exchange = exchange
        // Only a WebSocket upgrade is one: any other protocol (`h2c`, `TLS/1.0`) is not switched to, and the request
        // is answered as it is (RFC 9110 §7.8; `Upgrade` is hop-by-hop, never forwarded).
        if let upgrade = head.first("upgrade"), HeaderText.equalsIgnoringCase(upgrade, "websocket") {
            if first {
                if beginWebSocket(exchange) { return }
            } else {
                // An upgrade on a used connection: to be tried again on a new one (`307`, as Hummingbird does), never
                // to another host (the normalised target always starts with a single `/`).
                armIdleTimer()
                do {
                    let target = try RequestTarget(parsing: head.target)
                    answer(exchange, GatewayAnswer(status: .temporaryRedirect, headers: [.location: target.description], body: ByteBuffer()))
                } catch {
                    answer(exchange, GatewayAnswer.refused(error))
                }
                return
            }
        }
        armIdleTimer()
        let route: Route
        if let lastRoute, head.target(is: lastRoute.text) {
            route = lastRoute
        } else {
            let text = head.target
            let target: RequestTarget
            do {
                target = try RequestTarget(parsing: text)
            } catch {
                gateway.logger.debug("refused a request target", metadata: ["reason": .string(error.description)])
                answer(exchange, GatewayAnswer.refused(error))
                return
            }
            switch policy.route(target, method: head.method) {
            case .answer(let local):
                // The gateway's own endpoints and `404`: never remembered as a route.
                answer(exchange, local)
                return
            case .service(let service, let remainder):
                route = Route(text: text, target: target, service: service, remainder: remainder)
                lastRoute = route
            }
        }
        let service = route.service
        exchange.service = service.name
        if service.webSocket, route.remainder.segments.contains(KaazingEmulation.marker) {
            do throws(EmulationRequest.Refusal) {
                if let request = try EmulationRequest(head: head, remainder: route.remainder) {
                    exchange.route = route
                    emulate(exchange, request)
                    return
                }
            } catch {
                if let id = error.session, let session = gateway.emulatedWebSockets.session(id),
                   session.admits(origin: EmulationRequest.origin(head)) {
                    session.execute { $0.refusedRequest() }
                }
                answer(exchange, error.status == 404 ? .notFound : GatewayAnswer.invalidRequest(error.description, status: error.status))
                return
            }
        }
        // `X-Origin` is the bridge page's mark (``KaazingBridgePage``): it sends the emulated transport's requests only,
        // never another service's, whose answer it would read for a page of another origin (issue 54, finding 5).
        if head.first("x-origin") != nil {
            exchange.state.lastExchange()
            answer(exchange, GatewayAnswer.forbidden(because: "the bridge page sends the emulated transport's requests only"))
            return
        }
        if head.method == .other, let refusal = GatewayRequestPolicy.refusal(ofMethod: head.methodName) {
            answer(exchange, refusal)
            return
        }
        exchange.route = route
        if let tracer = gateway.tracer { startSpan(exchange, route: route, tracer: tracer) }
        if let remembered, head.isAdmitted(by: remembered, to: service) {
            exchange.fieldsPending = true
            admitted(exchange, gateway.readmit(remembered))
            return
        }
        exchange.fields = head.admissionFields(realm: service.realm)
        if let (admission, remembering) = gateway.admitNowRemembering(admissionRequest(exchange, query: route.target.query, service: service)) {
            remembered = remembering
            admitted(exchange, admission)
            return
        }
        remembered = nil
        admitOnTask(exchange, target: route.target, service: service) { handler, exchange, admission in handler.admitted(exchange, admission) }
    }

    /// The connection's client — its address, its certificate's thumbprint — and the exchange's span: what every
    /// admission of this connection carries (``AdmissionRequest``).
    func clientIdentity(_ exchange: Exchange) -> ClientIdentity {
        ClientIdentity(peer: peer, certificate: certificateThumbprint, span: exchange.span)
    }

    /// What `exchange` asks of `service`'s realm: its admission fields and `query`, from this connection's client.
    private func admissionRequest(_ exchange: Exchange, query: String?, service: ProtectedService) -> AdmissionRequest {
        AdmissionRequest(fields: exchange.fields, query: query, service: service, client: clientIdentity(exchange))
    }

    /// Runs the realm's login chain on a task (it suspends: bcrypt, introspection, Kerberos) and hands its answer to
    /// `then` back on the event loop.
    private func admitOnTask(
        _ exchange: Exchange, target: RequestTarget, service: ProtectedService,
        then: @escaping @Sendable (GatewayHTTPHandler, Exchange, Gateway.Admission) -> Void
    ) {
        exchange.state.deciding()
        guard let context else { return }
        let eventLoop = context.eventLoop
        let bound = NIOLoopBound((self, exchange), eventLoop: eventLoop)
        let gateway = self.gateway
        let request = admissionRequest(exchange, query: target.query, service: service)
        Task {
            let admission = await gateway.admit(request)
            eventLoop.execute {
                let (handler, exchange) = bound.value
                then(handler, exchange, admission)
            }
        }
    }

    /// A connection's first request asking for `Upgrade: websocket` (``GatewayRequestPolicy/webSocketUpgrade(_:to:)``):
    /// a handshake to a WebSocket service is decided by its realm (KAAZING's extended handshake inside the WebSocket)
    /// and, allowed, relayed on the event loop by a ``WebSocketBridge``; refused with the realm's `401`/`403`, a
    /// malformed handshake with `400`/`426`, and closed. `false`: not an upgrade the gateway switches to, answered as a
    /// plain request.
    private func beginWebSocket(_ exchange: Exchange) -> Bool {
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
        exchange.route = Route(text: head.target, target: target, service: service, remainder: remainder)
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

    private func webSocketAdmitted(_ exchange: Exchange, _ admission: Gateway.Admission, key: String) {
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
            let forwarding = forwarding(exchange)
            let relay = gateway.webSocketRelay(service: route.service, remainder: route.remainder, target: route.target, subject: subject,
                                               forwarding: forwarding)
            let base = route.service.base
            let upstream = WebSocketBridge.Upstream(
                key: route.service.upstreamKey,
                target: route.upstreamTarget,
                authority: base.authority)
            var answer = allocator.buffer(capacity: 256)
            answer.writeStaticString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: ")
            answer.writeString(Self.webSocketAccept(key))
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
            let bridge = WebSocketBridge(relay: relay, upstream: upstream, statistics: gateway.statistics, openWebSockets: gateway.openWebSockets,
                                         tls: gateway.upstreamPools, eventLoop: context.eventLoop, extensions: extensions)
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
    private func upgraded(
        _ context: ChannelHandlerContext, _ exchange: Exchange, answer: ByteBuffer,
        addHandlers: @escaping (ChannelPipeline.SynchronousOperations, WebSocketFrameEncoder) throws -> Void
    ) {
        context.writeAndFlush(wrapOutboundOut(answer), promise: nil)
        exchange.status = 101
        endSpans(exchange)
        self.exchange = nil
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
    private func startKaazingHandshake(_ exchange: Exchange, key: String) {
        guard let context, let route = exchange.route else { return }
        let upgrade = KaazingHandshakeHandler.Upgrade(route: route, fields: exchange.fields, key: key, forwarding: forwarding(exchange),
                                                      client: clientIdentity(exchange))
        let handshake = KaazingHandshakeHandler(gateway: gateway, upgrade: upgrade)
        upgraded(context, exchange, answer: KaazingHandshakeHandler.switchingAnswer(key: key, allocator: allocator)) { operations, encoder in
            try operations.addHandler(handshake, position: .after(encoder))
        }
    }

    // MARK: KAAZING's emulated WebSocket

    /// A request of KAAZING's emulated transport (``EmulationRequest``): a create is decided by the service's realm like
    /// any request and answered once the upstream accepted (``EmulatedWebSocket``); an upstream body and a downstream
    /// request go to their session (``EmulatedWebSockets``), wherever it lives; a downstream's connection becomes the
    /// session's once its head is written.
    private func emulate(_ exchange: Exchange, _ request: EmulationRequest) {
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
    private func emulationAdmitted(_ exchange: Exchange, _ admission: Gateway.Admission, _ create: EmulationRequest.Create) {
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
            let webSocketRoute = Route(text: target.description, target: target, service: service, remainder: remainder)
            let relay = gateway.webSocketRelay(service: service, remainder: remainder, target: target, subject: subject,
                                               forwarding: forwarding(exchange))
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
            let bridge = WebSocketBridge(
                relay: relay,
                upstream: WebSocketBridge.Upstream(key: service.upstreamKey, target: webSocketRoute.upstreamTarget, authority: service.base.authority,
                                                   protocols: create.protocols.isEmpty ? nil : create.protocols.joined(separator: ", ")),
                statistics: gateway.statistics, openWebSockets: gateway.openWebSockets, tls: gateway.upstreamPools, eventLoop: loop,
                extensions: extensions,
                opening: { selected in
                    session.opened(selectedProtocol: selected)
                    return []
                })
            exchange.state.connecting()
            session.start(bridge)
        }
    }

    /// An upstream body read whole: its frames go to the session (on its loop), the answer `200` or `400`.
    private func emulatedUpstream(_ exchange: Exchange, session: EmulatedWebSockets.Entry, sequence: UInt64?) {
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
    private func emulatedDownstream(_ exchange: Exchange, session: EmulatedWebSockets.Entry, refusal: EmulatedWebSocket.Refusal?, kilobytes: Int?) {
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
        self.exchange = nil
        machine.handedOver()
        reading = .done
        inbound = nil
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

    /// The connection's pipeline after a `101`: NIO's WebSocket frame encoder and what `addHandlers` puts behind it
    /// (the frames' reader and a bridge's client side, or KAAZING's handshake) in place of this handler. Frames the
    /// client sent right behind its request go to what was added.
    private func switchToWebSocket(
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
            machine.handedOver()
            if let rest = inbound, rest.readableBytes > 0 {
                inbound = nil
                context.fireChannelRead(wrapInboundOut(rest))
                context.fireChannelReadComplete()
            }
            operations.removeHandler(context: context, promise: nil)
            if readHeld {
                // From the tail, through the bridge's client side, which holds it until the upstream is up.
                readHeld = false
                channel.read()
            }
        } catch {
            gateway.logger.debug("could not switch a connection to WebSocket", metadata: ["error": .string("\(error)")])
            context.close(promise: nil)
        }
    }

    /// `Sec-WebSocket-Accept` for a client's key (RFC 6455 §4.2.2).
    static func webSocketAccept(_ key: String) -> String {
        Data(Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }

    private func admitted(_ exchange: Exchange, _ admission: Gateway.Admission) {
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
    private func forwarding(_ exchange: Exchange) -> ForwardingHeaders {
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

    private func connect(_ exchange: Exchange, fresh: Bool) {
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

    private func attach(_ exchange: Exchange, to upstream: UpstreamConnection) {
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
        upstreamFlushPending = false
        if !clientWritable { upstream.handler.pauseReads() }
        resumeReadsIfPossible()
    }

    /// The upstream could not be reached or dropped the request before answering: `502` (or `400` when the
    /// client's own body failed).
    private func upstreamUnavailable(_ exchange: Exchange, error: String) {
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
            heldAnswerHead = response
        } else {
            context.write(wrapOutboundOut(response), promise: nil)
            clientFlushPending = true
        }
    }

    /// The largest body that joins its answer's head in one buffer (a copy of a few bytes is cheaper than a second
    /// buffer in the socket's write).
    static let inlineAnswerBody = 2048

    func upstreamBody(_ bytes: ByteBuffer) {
        guard let exchange, exchange.state.phase == .relaying, let upstream = exchange.upstream, let context else { return }
        if var head = heldAnswerHead {
            heldAnswerHead = nil
            var bytes = bytes
            head.writeBuffer(&bytes)
            context.write(wrapOutboundOut(head), promise: nil)
        } else {
            context.write(wrapOutboundOut(bytes), promise: nil)
        }
        clientFlushPending = true
        if !clientWritable { upstream.handler.pauseReads() }
    }

    func upstreamEnd(reusable: Bool) {
        guard let exchange, exchange.state.phase == .relaying, exchange.upstream != nil, let context else { return }
        exchange.state.upstreamAnswerEnded(reusable: reusable)
        writeHeldAnswerHead(context)
        clientFlushPending = false
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
        guard clientFlushPending else { return }
        clientFlushPending = false
        context.flush()
    }

    /// Writes an answer's head held for its body (``heldAnswerHead``), when the body did not come with it.
    private func writeHeldAnswerHead(_ context: ChannelHandlerContext) {
        guard let head = heldAnswerHead else { return }
        heldAnswerHead = nil
        context.write(wrapOutboundOut(head), promise: nil)
        clientFlushPending = true
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
            self.exchange = nil
            close()
        }
    }

    // MARK: Answers and the end of an exchange

    /// The gateway's own answer to `exchange`.
    private func answer(_ exchange: Exchange, _ answer: GatewayAnswer) {
        guard let context, exchange.state.answering() else { return }
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            upstream.close()
        }
        exchange.status = answer.status.code
        let bytes = answer.bytes(minorVersion: exchange.head.minorVersion, close: machine.closesAfter(keepAlive: exchange.state.keepAlive),
                                 withBody: exchange.head.method != .head, allocator: allocator)
        responseDone(exchange, written: context.writeAndFlush(wrapOutboundOut(bytes)))
    }

    /// The answer's last part is written (`written`: when it is, needed only when the connection closes after it).
    private func responseDone(_ exchange: Exchange, written: EventLoopFuture<Void>?) {
        let dropRest = exchange.state.answerEnded()
        // The idle time between requests counts from the end of the answer.
        let closes = machine.answerEnded(keepAlive: exchange.state.keepAlive, now: now)
        if dropRest {
            // The client is still sending: its upstream connection cannot be reused; the rest is read and dropped.
            if let upstream = exchange.upstream {
                exchange.upstream = nil
                upstream.close()
            }
        }
        if closes {
            self.exchange = nil
            finish(exchange)
            _ = machine.close()
            let drain = dropRest
            // `self`, not a weak reference: a weak reference would move every later retain and release of the
            // handler (several per request) onto the runtime's slow path; the write's future always completes.
            let end = {
                guard let context = self.context else { return }
                if drain {
                    LingeringClose.answerAndClose(context, nil)
                } else {
                    context.close(promise: nil)
                }
            }
            if let written { written.assumeIsolated().whenComplete { _ in end() } } else { end() }
            return
        }
        finishIfDone(exchange)
        resumeReadsIfPossible()
    }

    /// Ends the exchange once both its messages are complete, and starts the next.
    private func finishIfDone(_ exchange: Exchange) {
        guard exchange.state.isComplete, self.exchange === exchange else { return }
        self.exchange = nil
        finish(exchange)
        startNext()
    }

    /// Counts the exchange and gives its upstream connection back (or closes it).
    private func finish(_ exchange: Exchange) {
        if exchange.counted { count(exchange) }
        endSpans(exchange)
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            if exchange.state.keepsUpstream {
                keep(upstream)
            } else {
                upstream.close()
            }
        }
    }

    /// Counts `exchange` in the request metrics, with the counter and timer of the connection's last exchange when they
    /// are its service's and status's.
    private func count(_ exchange: Exchange) {
        let metrics: KeyedMetricHandles<GatewayStatistics.RequestKey>.Handles
        if let last = lastMetrics, last.status == exchange.status, last.service == exchange.service {
            metrics = last.handles
        } else {
            metrics = gateway.statistics.requestMetrics(service: exchange.service, status: exchange.status)
            lastMetrics = (exchange.service, exchange.status, metrics)
        }
        metrics.counter.increment()
        // Until the end of its answer (``responseDone(_:written:)`` tells the machine then), or now when it failed.
        let end = exchange.state.responseEnded ? machine.lastActivity : now
        metrics.timer.recordNanoseconds(max(0, (end - exchange.start).nanoseconds))
    }

    /// Keeps the upstream connection of an exchange that ended cleanly for the connection's next request (most go
    /// to the same upstream: no pool lookup, no hashing of its key), the one kept before going back to the pool.
    private func keep(_ upstream: UpstreamConnection) {
        upstream.handler.exchange = nil
        upstream.handler.resumeReads()
        if let previous = keptUpstream { pool?.release(previous) }
        keptUpstream = upstream
    }

    /// Gives the kept upstream connection back to the pool (the client's connection ends, or leaves the relay).
    private func releaseKeptUpstream() {
        guard let kept = keptUpstream else { return }
        keptUpstream = nil
        pool?.release(kept)
    }

    /// Drops an exchange whose client went away.
    private func abandon(_ exchange: Exchange) {
        self.exchange = nil
        bodyCutShort(exchange)
        endSpans(exchange)
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            upstream.close()
        }
    }

    private func close() {
        guard let context, machine.close() else { return }
        idleTimer?.cancel()
        idleTimer = nil
        context.close(promise: nil)
    }

    // MARK: The idle timeout

    /// Closes the connection once it has read nothing for the idle timeout while idle between requests or inside
    /// a request's body; an exchange waiting for its upstream is the upstream's read timeout's business.
    private func armIdleTimer() {
        guard idleTimer == nil, let context else { return }
        scheduleIdleCheck(context, at: machine.lastActivity + machine.idleTimeout)
    }

    /// The first request's head has `headTimeout` from the connection's opening (the TLS handshake included): a client
    /// that opens connections and sends half a request line, or a byte now and then, holds them that long at most.
    private func firstHeadDue(_ context: ChannelHandlerContext) {
        guard let due = machine.opened(now: now) else { return }
        idleTimer?.cancel()
        scheduleIdleCheck(context, at: due)
    }

    /// A later head began to arrive and is not complete: it has `headTimeout` from its first byte, however it dribbles.
    private func headArriving() {
        guard let context, let due = machine.headArriving(now: now) else { return }
        idleTimer?.cancel()
        scheduleIdleCheck(context, at: due)
    }

    /// `408` and the close: a request's head did not arrive whole within `headTimeout`. What the client sent of it
    /// is read on while the answer goes out (``LingeringClose``): a close with unread bytes would reset the connection
    /// and could lose the answer.
    private func headTimedOut(_ context: ChannelHandlerContext) {
        gateway.logger.debug("closing a connection whose request head did not arrive in time")
        let answer = GatewayAnswer.invalidRequest("the request head did not arrive in time", status: 408)
        let bytes = answer.bytes(minorVersion: 1, close: true, withBody: true, allocator: allocator)
        _ = machine.close()
        reading = .done
        inbound = nil
        LingeringClose.answerAndClose(context, wrapOutboundOut(bytes))
    }

    private func scheduleIdleCheck(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        // Holds `self` until it runs or is cancelled (`close`, `channelInactive`, `handlerRemoved` cancel it): no weak
        // reference, which would put every retain and release of the handler on the runtime's slow path.
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.idleTimer = nil
            guard let context = self.context else { return }
            switch self.machine.timerFired(now: self.now, self.progress) {
            case .none:
                return
            case .reschedule(let deadline):
                self.scheduleIdleCheck(context, at: deadline)
            case .headTimedOut:
                self.headTimedOut(context)
            case .closeIdle:
                self.gateway.logger.debug("closing an idle connection")
                self.close()
            }
        }
    }
}
