// The connection's handler (this file about 360 lines: the channel's events and an exchange's start, which every kind of
// request goes through), in a file per kind of request it serves: this one runs the channel's events and starts each
// exchange; `+Reading` (heads and bodies as they come), `+Relay` (to the upstream and back),
// `+WebSocket` (plain upgrades and the start of KAAZING's extended handshake), `+Emulation` (KAAZING's emulated
// transport), `+IdleTimeout` (the head and idle deadlines), `+Answers` (the gateway's own answers and the end of an
// exchange), `+Tracing`. The connection's state is its machine's:
// `GatewayConnectionStateMachine` (its life, its exchange under way, held reads, flushes, timers), with
// `GatewayRequestReader` (bytes into requests) and `GatewayExchangeStateMachine` (an exchange's phase and the decisions
// on its messages and connections). Apart: `GatewayRequestPolicy` (what the gateway answers itself), `GatewayExchange`
// and `GatewayRoute`, `ClientRequestHead` (a request read in place), `UpstreamRequestHead` and `HeadBytesWriter` (header
// rules, heads as bytes), `GatewayAnswer+Bytes`, `UpstreamConnectionPool`, `UpstreamConnection` and
// `UpstreamResponseHandler` (upstream side), `WebSocketBridge` (after an upgrade, built by `Gateway.webSocketBridge`),
// `KaazingHandshakeHandler` (KAAZING's upgrade).

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


    let gateway: Gateway
    let policy: GatewayRequestPolicy
    /// The connection's life and timers: serving, upgrading, handed over or closing; graceful shutdown; the head and
    /// idle deadlines.
    var machine: GatewayConnectionStateMachine
    var context: ChannelHandlerContext?
    var pool: UpstreamConnectionPool?
    /// The client's bytes turned into requests: the reading position and what is read but not yet taken.
    var reader = GatewayRequestReader()
    /// The exchange under way, which the machine's serving state holds.
    var exchange: GatewayExchange? { machine.exchange }
    /// Switching to a WebSocket, or handed to what serves the connection after an upgrade or an emulated downstream.
    var removed: Bool { machine.phase == .upgrading || machine.phase == .handedOver }
    var closing: Bool { machine.phase == .closing }
    /// The channel's allocator (read several times a request; `context.channel` costs a retain and a release each time).
    var allocator = ByteBufferAllocator()
    var idleTimer: Scheduled<Void>?
    /// The connection's event loop, whose clock the timers follow (an `EmbeddedEventLoop`'s in tests).
    var eventLoop: (any EventLoop)?
    var now: NIODeadline { eventLoop?.now ?? .now() }
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
    var lastForwarding: (host: String?, fields: ForwardingHeaders)?
    /// The last admission by remembered credentials (`Basic`, a token) on this connection, to admit the next request
    /// with the same `Authorization` without asking the login chain again.
    var remembered: RememberedAdmission?
    /// The connection's last route: a client asking for the same target again (polling, a health check, a load) is
    /// routed by comparing its bytes, without parsing and routing it again (routes depend on the target alone).
    var lastRoute: GatewayRoute?
    /// The upstream connection of the last exchange, kept for the next request while the client's connection lives
    /// (``keep(_:)``); back to the loop's pool when it ends.
    var keptUpstream: UpstreamConnection?
    /// The request metrics the last exchange was counted with.
    var lastMetrics: (service: String, status: Int, handles: KeyedMetricHandles<GatewayStatistics.RequestKey>.Handles)?

    init(gateway: Gateway) {
        self.gateway = gateway
        self.policy = GatewayRequestPolicy(gateway: gateway)
        self.machine = GatewayConnectionStateMachine(idleTimeout: TimeAmount(gateway.idleTimeout), headTimeout: TimeAmount(gateway.headerReadTimeout),
                                                     now: .uptimeNanoseconds(0))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        allocator = context.channel.allocator
        _ = machine.clientWritabilityChanged(context.channel.isWritable)
        pool = gateway.upstreamPools.pool(for: context.eventLoop)
        eventLoop = context.eventLoop
        if context.channel.isActive { firstHeadDue(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        firstHeadDue(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        ended(machine.ended())
        self.context = nil
    }

    // MARK: The client's side
    //
    // Each channel event is one event of the machine, whose action is run here.

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch machine.channelRead(now: now) {
        case .process:
            reader.append(unwrapInboundIn(data))
            startNext()
        case .keep:
            reader.append(unwrapInboundIn(data))
        case .passOn:
            context.fireChannelRead(data)
        case .drop:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        switch machine.channelReadComplete() {
        case .passOn: context.fireChannelReadComplete()
        case .flushUpstream: exchange?.upstream?.flush()
        case .none: break
        }
    }

    func read(context: ChannelHandlerContext) {
        switch machine.readAsked(pipelined: reader.hasPending, upstreamWritable: exchange?.upstream?.isWritable ?? true) {
        case .read: context.read()
        case .hold: break
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        switch machine.clientWritabilityChanged(context.channel.isWritable) {
        case .resumeUpstreamReads(let exchange): exchange.upstream?.handler.resumeReads()
        case .none: break
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended(machine.ended())
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        let kind: GatewayConnectionStateMachine.UserEvent
        if event is ChannelShouldQuiesceEvent {
            kind = .quiesce
        } else if let event = event as? ChannelEvent, event == .inputClosed {
            kind = .inputClosed
        } else {
            kind = .other
        }
        switch machine.userEvent(kind) {
        case .passOn: context.fireUserInboundEventTriggered(event)
        case .close: close()
        case .lastExchange(let exchange): exchange.state.lastExchange()
        case .bodyCutShort: bodyFailed()
        case .none: break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch machine.errorCaught() {
        case .passOn: context.fireErrorCaught(error)
        case .close: close()
        }
    }

    /// The connection ended (closed, or this handler left it): its timer stops, the exchange that was under way lets
    /// its upstream and spans go, and the kept upstream connection goes back to the pool.
    private func ended(_ abandoned: GatewayExchange?) {
        idleTimer?.cancel()
        idleTimer = nil
        if let abandoned { abandon(abandoned) }
        releaseKeptUpstream()
    }

    // MARK: Exchanges

    /// Whether the client's socket must not be read now (``GatewayConnectionStateMachine/holdsReads(pipelined:upstreamWritable:)``).
    var holdReads: Bool {
        machine.holdsReads(pipelined: reader.hasPending, upstreamWritable: exchange?.upstream?.isWritable ?? true)
    }

    func resumeReadsIfPossible() {
        guard machine.readHeld, let context, machine.readsMayResume(holds: holdReads) else { return }
        context.read()
    }

    /// Starts the exchanges of the requests read, one at a time.
    func startNext() {
        process()
        if exchange == nil, !closing, !removed { armIdleTimer() }
        resumeReadsIfPossible()
    }

    func begin(_ head: ClientRequestHead, bodiless: Bool) {
        let (keepAlive, first) = machine.headRead(keepAlive: head.isKeepAlive)
        let exchange = GatewayExchange(head: head, keepAlive: keepAlive, requestEnded: bodiless, start: machine.lastActivity)
        machine.exchangeBegan(exchange)
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
        let route: GatewayRoute
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
                route = GatewayRoute(text: text, target: target, service: service, remainder: remainder)
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
    func clientIdentity(_ exchange: GatewayExchange) -> ClientIdentity {
        ClientIdentity(peer: peer, certificate: certificateThumbprint, span: exchange.span)
    }

    /// What `exchange` asks of `service`'s realm: its admission fields and `query`, from this connection's client.
    func admissionRequest(_ exchange: GatewayExchange, query: String?, service: ProtectedService) -> AdmissionRequest {
        AdmissionRequest(fields: exchange.fields, query: query, service: service, client: clientIdentity(exchange))
    }

    /// Runs the realm's login chain on a task (it suspends: bcrypt, introspection, Kerberos) and hands its answer to
    /// `then` back on the event loop.
    func admitOnTask(
        _ exchange: GatewayExchange, target: RequestTarget, service: ProtectedService,
        then: @escaping @Sendable (GatewayHTTPHandler, GatewayExchange, Gateway.Admission) -> Void
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

    func close() {
        guard let context, machine.close() else { return }
        idleTimer?.cancel()
        idleTimer = nil
        context.close(promise: nil)
    }
}
