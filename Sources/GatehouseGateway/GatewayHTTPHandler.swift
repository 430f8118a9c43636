// One file on purpose: a channel handler is one state machine — the exchange in flight, its phase, the
// held reads, the upstream connection — whose state is private to it; split across files it would have to be made
// internal to the module. What is not that state lives apart: `UpstreamRequestHead` (header rules, heads as bytes),
// `UpstreamConnectionPool` and `UpstreamConnection` (upstream side; `UpstreamResponseHandler` reads answers),
// `WebSocketBridge` (after an upgrade).

import Crypto
import Foundation
import GatehouseHTTP
import HummingbirdWebSocket
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The gateway's plain HTTP, on the connection's event loop: each request is routed, admitted and relayed to its
/// upstream over a keep-alive connection of the loop's ``UpstreamConnectionPool``, its head and body written to the
/// upstream socket as bytes and the answer's bytes to the client's as they come (``UpstreamResponseHandler`` reads
/// them; only the answer's head is rewritten, and written past NIO's response encoder) — no task, no copy of a body.
///
/// It sits right behind NIO's HTTP/1.1 codec, in front of Hummingbird's WebSocket upgrader. Admission runs here
/// when the realm decides without suspending (no realm, no credentials, or credentials its login modules remember:
/// ``Gateway/admitNow(headers:query:to:)``); otherwise the login chain runs on a task (bcrypt, token introspection,
/// Kerberos) and the exchange goes on on the loop when it answers, the client's reads held meanwhile.
///
/// A first request asking for an `Upgrade` is handed to Hummingbird (the WebSocket upgrader, ``Gateway/shouldUpgrade``),
/// and the handler leaves the pipeline: the connection is Hummingbird's from then on. A WebSocket upgrade on a
/// connection already used for HTTP is redirected (`307` to its normalised target, `400` for a malformed one), as
/// Hummingbird does. One exchange at a time: pipelined requests wait, unread, until the answer before them is
/// complete. Bodies stream both ways with backpressure: the client's reads stop while the upstream socket is full,
/// the upstream's while the client's is. Hummingbird's behaviours are kept: `Connection: close`, HTTP/1.0, the idle
/// timeout (between requests, or while a request's body stalls), graceful shutdown (`ChannelShouldQuiesceEvent`:
/// closed when idle, or after the answer in progress), `400` and close for a malformed later request.
final class GatewayHTTPHandler: ChannelDuplexHandler, RemovableChannelHandler, UpstreamExchange {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// One request and its answer.
    private final class Exchange {
        enum Phase {
            /// Admission (on a task) is under way; the body waits.
            case deciding
            /// Waiting for an upstream connection; the body waits.
            case connecting
            /// The request is relayed to `upstream`, the answer back.
            case relaying
            /// The gateway has answered (or the answer is complete): the rest of the client's body is dropped.
            case answered
        }

        let head: HTTPRequestHead
        let start = ContinuousClock.now
        var phase = Phase.deciding
        /// Whether the client connection stays open after this exchange.
        var keepAlive: Bool
        /// Whether the request announces a body (`Content-Length` above 0, or `Transfer-Encoding`).
        let hasBody: Bool
        var requestEnded = false
        var responseStarted = false
        var responseEnded = false
        /// Parts of the request received before the upstream connection was ready.
        var waiting: [HTTPServerRequestPart] = []
        var service = "none"
        var route: (service: ProtectedService, remainder: ProtectedService.Remainder, target: RequestTarget)?
        var fields = HTTPFields()
        /// Whether ``fields`` are still to be made (a request admitted by its connection's memory needs none of them
        /// unless its forwarding fields are made anew).
        var fieldsPending = false
        /// The request's head as written upstream.
        var upstreamHead: ByteBuffer?
        /// Whether the request body goes upstream chunked (NIO's decoder hands it over without its chunks' framing).
        var upstreamChunked = false
        var upstream: UpstreamConnection?
        /// Whether the upstream connection had served an exchange before (a stale one may close under us).
        var reused = false
        var retried = false
        var bodySent = false
        /// Whether the client's body failed (malformed, cut short): `400`, not `502`.
        var bodyFailed = false
        var upstreamReusable = false
        var successChallenge: String?
        var status = 0
        /// Whether the exchange counts in the request metrics (WebSocket upgrades do not).
        var counted = true

        init(head: HTTPRequestHead, keepAlive: Bool) {
            self.head = head
            self.keepAlive = keepAlive
            let length = head.headers.first(name: "content-length").flatMap { Int($0) } ?? 0
            hasBody = length > 0 || head.headers.contains(name: "transfer-encoding")
        }
    }

    private let gateway: Gateway
    private let progress: FirstRequestProgress
    private let idleTimeout: TimeAmount
    private var context: ChannelHandlerContext?
    /// NIO's response encoder's place in the pipeline: an upstream's answer, relayed as bytes, is written from there,
    /// past the encoder (the gateway's own answers go through it).
    private var encoderContext: ChannelHandlerContext?
    private var pool: UpstreamConnectionPool?
    /// Request parts read but not yet taken by an exchange (pipelined requests).
    private var queue = CircularBuffer<HTTPServerRequestPart>()
    private var exchange: Exchange?
    private var requests = 0
    /// A `read` held back while the current exchange cannot take more.
    private var readHeld = false
    private var quiescing = false
    private var closing = false
    /// Handed to Hummingbird (a first request asking for an upgrade).
    private var removed = false
    private var starting = false
    private var upstreamFlushPending = false
    private var idleTimer: Scheduled<Void>?
    /// The last read from the client, or the end of the last answer.
    private var lastRead = NIODeadline.now()
    /// The client's address, and whether it is a trusted proxy (``TrustedProxies``).
    private lazy var peer = context?.channel.remoteAddress?.ipAddress
    private lazy var peerIsTrusted = gateway.trustedProxies.contains(peer)
    /// The forwarding fields of the last request from a peer that is not a trusted proxy, and its `Host`.
    private var lastForwarding: (host: String?, fields: ForwardingHeaders)?
    /// The last admission by remembered credentials (`Basic`, a token) on this connection, to admit the next request
    /// with the same `Authorization` without asking the login chain again.
    private var remembered: RememberedAdmission?

    init(gateway: Gateway, progress: FirstRequestProgress) {
        self.gateway = gateway
        self.progress = progress
        self.idleTimeout = TimeAmount(gateway.idleTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        encoderContext = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
        pool = gateway.upstreamPools.pool(for: context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
        if let exchange { abandon(exchange) }
        self.context = nil
        encoderContext = nil
    }

    // MARK: The client's side

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if removed || closing {
            if removed { context.fireChannelRead(data) }
            return
        }
        let part = unwrapInboundIn(data)
        lastRead = .now()
        if let exchange, !exchange.requestEnded {
            if case .head = part {} else {
                take(part, into: exchange)
                return
            }
        }
        queue.append(part)
        if exchange == nil { startNext() }
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
        if context.channel.isWritable { exchange?.upstream?.handler.resumeReads() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing = true
        idleTimer?.cancel()
        idleTimer = nil
        if let exchange { abandon(exchange) }
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !removed else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if event is ChannelShouldQuiesceEvent {
            // Graceful shutdown: close now when idle, else after the answer in progress (`Connection: close`).
            quiescing = true
            if exchange == nil { close() }
            return
        }
        if let event = event as? ChannelEvent, event == .inputClosed {
            // The client sent its last byte: answer what is under way, then close.
            if let exchange { exchange.keepAlive = false } else { close() }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !removed, !closing else {
            context.fireErrorCaught(error)
            return
        }
        guard error is HTTPParserError else {
            close()
            return
        }
        if let exchange, !exchange.requestEnded {
            // The client framed its body wrongly or cut it short: its fault, `400`, and the connection ends.
            exchange.keepAlive = false
            exchange.bodyFailed = true
            if let upstream = exchange.upstream {
                exchange.upstream = nil
                upstream.close()
            }
            if exchange.responseStarted {
                close()
            } else {
                answer(exchange, GatewayAnswer.invalidRequest("the request body is malformed or incomplete"))
            }
            return
        }
        if let exchange {
            // A malformed request behind the one in progress: the connection ends after its answer.
            exchange.keepAlive = false
            return
        }
        if requests == 0 {
            // The first request: `MalformedFirstRequestHandler` answers it.
            context.fireErrorCaught(error)
            return
        }
        let overflow = (error as? HTTPParserError) == .headerOverflow
        let refusal = overflow
            ? GatewayAnswer.invalidRequest("the request head is larger than the gateway accepts", status: 431)
            : GatewayAnswer.invalidRequest("the request is not a valid HTTP/1.1 request")
        closing = true
        progress.answered = true
        var headers = Self.headers(refusal.headers)
        headers.add(name: "Content-Length", value: String(refusal.body.readableBytes))
        headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: refusal.status.code), headers: headers))),
                      promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(refusal.body))), promise: nil)
        LingeringClose.answerAndClose(context, wrapOutboundOut(.end(nil)))
    }

    // MARK: Exchanges

    /// Whether the client's socket must not be read now: an exchange waits for admission or an upstream, its
    /// upstream socket is full, or a pipelined request already waits its turn. A complete request whose answer is
    /// awaited does not stop the reads by itself: stopping and resuming them would cost two `epoll_ctl` calls per
    /// request, and a client rarely pipelines (what it sends meanwhile is queued, and then the reads stop).
    private var holdReads: Bool {
        guard !removed, !closing, let exchange else { return false }
        if exchange.requestEnded { return !queue.isEmpty }
        switch exchange.phase {
        case .deciding, .connecting: return true
        case .relaying: return !(exchange.upstream?.isWritable ?? true)
        case .answered: return false
        }
    }

    private func resumeReadsIfPossible() {
        guard readHeld, !holdReads, let context else { return }
        readHeld = false
        context.read()
    }

    /// Starts the exchanges of the queued requests, one at a time.
    private func startNext() {
        guard !starting else { return }
        starting = true
        defer { starting = false }
        while exchange == nil, !closing, !removed, let part = queue.popFirst() {
            guard case .head(let head) = part else { continue }
            begin(head)
            while let exchange, !exchange.requestEnded, let next = queue.first {
                if case .head = next { break }
                queue.removeFirst()
                take(next, into: exchange)
            }
        }
        if exchange == nil, !closing, !removed { armIdleTimer() }
        resumeReadsIfPossible()
    }

    /// A part of the current request's body, or its end.
    private func take(_ part: HTTPServerRequestPart, into exchange: Exchange) {
        if case .end = part { exchange.requestEnded = true }
        switch exchange.phase {
        case .relaying:
            if let upstream = exchange.upstream { forward(part, of: exchange, to: upstream) }
        case .deciding, .connecting:
            exchange.waiting.append(part)
        case .answered:
            break
        }
        if exchange.requestEnded { finishIfDone(exchange) }
    }

    private func forward(_ part: HTTPServerRequestPart, of exchange: Exchange, to upstream: UpstreamConnection) {
        switch part {
        case .head:
            break
        case .body(let buffer):
            if exchange.upstreamChunked {
                if let chunk = UpstreamRequestHead.chunk(buffer, allocator: upstream.allocator) { upstream.write(chunk) }
            } else {
                upstream.write(buffer)
            }
            exchange.bodySent = true
            upstreamFlushPending = true
        case .end(let trailers):
            if exchange.upstreamChunked { upstream.write(UpstreamRequestHead.lastChunk(trailers: trailers, allocator: upstream.allocator)) }
            upstream.flush()
        }
    }

    private func begin(_ head: HTTPRequestHead) {
        requests += 1
        let exchange = Exchange(head: head, keepAlive: head.isKeepAlive && !quiescing)
        self.exchange = exchange
        if let upgrade = head.headers.first(name: "upgrade") {
            if requests == 1 {
                if !acceptWebSocket(exchange) { handOver(head) }
                return
            }
            if upgrade.lowercased() == "websocket" {
                // An upgrade on a used connection: to be tried again on a new one (Hummingbird's 307), never to
                // another host (the normalised target always starts with a single `/`).
                armIdleTimer()
                do {
                    let target = try RequestTarget(parsing: head.uri)
                    send(exchange, status: 307, ["Location": target.description], ByteBuffer())
                } catch {
                    answer(exchange, GatewayAnswer.refused(error))
                }
                return
            }
        }
        armIdleTimer()
        let target: RequestTarget
        do {
            target = try RequestTarget(parsing: head.uri)
        } catch {
            gateway.logger.debug("refused a request target", metadata: ["reason": .string(error.description)])
            answer(exchange, GatewayAnswer.refused(error))
            return
        }
        // The gateway's own probes for load balancers (before any service: a service at `/` cannot hide them).
        if head.method == .GET, target.segments.count == 1, target.segments[0] == "health" || target.segments[0] == "ready" {
            answer(exchange, GatewayAnswer.probe(target.segments[0] == "health" ? "ok" : "ready"))
            return
        }
        if head.method == .GET, target.segments == ["metrics"] {
            send(exchange, status: 200, ["Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store"],
                 ByteBuffer(bytes: gateway.statistics.exposition()))
            return
        }
        guard let (service, remainder) = gateway.route(target) else {
            send(exchange, status: 404, ["Content-Type": "text/plain; charset=utf-8"], ByteBuffer(string: "404 Not Found\n"))
            return
        }
        exchange.service = service.name
        let method = head.method.rawValue
        if Gateway.refusedMethods.contains(method) {
            var refusal = GatewayAnswer.invalidRequest("the gateway does not relay \(method)", status: 405)
            refusal.headers[.allow] = "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS"
            answer(exchange, refusal)
            return
        }
        exchange.route = (service, remainder, target)
        if let remembered, remembered.admits(authorization: UpstreamRequestHead.authorization(head.headers), to: service) {
            exchange.fieldsPending = true
            admitted(exchange, gateway.readmit(remembered))
            return
        }
        exchange.fields = UpstreamRequestHead.admissionFields(head.headers, realm: service.realm)
        if let (admission, remembering) = gateway.admitNowRemembering(headers: exchange.fields, query: target.query, to: service) {
            remembered = remembering
            admitted(exchange, admission)
            return
        }
        remembered = nil
        admitOnTask(exchange, target: target, service: service) { handler, exchange, admission in handler.admitted(exchange, admission) }
    }

    /// Runs the realm's login chain on a task (it suspends: bcrypt, introspection, Kerberos) and hands its answer to
    /// `then` back on the event loop.
    private func admitOnTask(
        _ exchange: Exchange, target: RequestTarget, service: ProtectedService,
        then: @escaping @Sendable (GatewayHTTPHandler, Exchange, Gateway.Admission) -> Void
    ) {
        exchange.phase = .deciding
        guard let context else { return }
        let eventLoop = context.eventLoop
        let bound = NIOLoopBound((self, exchange), eventLoop: eventLoop)
        let gateway = self.gateway
        let fields = exchange.fields
        Task {
            let admission = await gateway.admit(headers: fields, query: target.query, to: service)
            eventLoop.execute {
                let (handler, exchange) = bound.value
                then(handler, exchange, admission)
            }
        }
    }

    /// A first request that is a well-formed WebSocket upgrade for a WebSocket service: admitted here and, when
    /// allowed, relayed on the event loop by a ``WebSocketBridge``; refused with the realm's `401`/`403` and closed.
    /// Anything else asking for an upgrade (`false`) goes to Hummingbird's upgrader, which refuses it as before.
    private func acceptWebSocket(_ exchange: Exchange) -> Bool {
        let head = exchange.head
        guard head.method == .GET, !exchange.hasBody,
              head.headers["upgrade"].count == 1, HeaderText.equalsIgnoringCase(head.headers["upgrade"][0], "websocket"),
              UpstreamRequestHead.connectionTokens(head.headers).contains("upgrade"),
              head.headers["sec-websocket-version"] == ["13"], let key = head.headers.first(name: "sec-websocket-key"), !key.isEmpty,
              let target = try? RequestTarget(parsing: head.uri), let (service, remainder) = gateway.route(target), service.webSocket
        else { return false }
        exchange.service = service.name
        exchange.counted = false  // an upgrade is not an HTTP request of the metrics, accepted or not
        exchange.keepAlive = false
        exchange.route = (service, remainder, target)
        exchange.fields = UpstreamRequestHead.fields(head.headers)
        if let admission = gateway.admitNow(headers: exchange.fields, query: target.query, to: service) {
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
        case .answer(let refusal):
            answer(exchange, refusal)
        case .allow(let subject):
            let forwarding = forwarding(exchange)
            let relay = gateway.webSocketRelay(service: route.service, remainder: route.remainder, target: route.target, subject: subject,
                                               forwarding: forwarding)
            let base = route.service.base
            let upstream = WebSocketBridge.Upstream(
                key: UpstreamKey(host: base.host, port: base.port, tls: base.scheme == "https"),
                target: base.target(path: route.remainder.path, query: Gateway.forwardedQuery(route.target, service: route.service)),
                authority: base.authority)
            var headers = HTTPHeaders()
            headers.add(name: "Upgrade", value: "websocket")
            headers.add(name: "Connection", value: "upgrade")
            headers.add(name: "Sec-WebSocket-Accept", value: Self.webSocketAccept(key))
            if let challenge = subject?.successChallenge { headers.add(name: "WWW-Authenticate", value: challenge) }
            progress.answered = true
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .switchingProtocols, headers: headers))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            self.exchange = nil
            removed = true
            idleTimer?.cancel()
            idleTimer = nil
            let bridge = WebSocketBridge(relay: relay, upstream: upstream, statistics: gateway.statistics, openWebSockets: gateway.openWebSockets,
                                         tls: gateway.upstreamPools, eventLoop: context.eventLoop)
            // Out of the HTTP decoder's callback before its handler is removed.
            context.eventLoop.assumeIsolated().execute { [self] in
                switchToWebSocket(context, bridge: bridge)
            }
        }
    }

    /// The connection's pipeline after a `101`: NIO's WebSocket frame encoder, the frames' reader and the bridge's
    /// client side in place of the HTTP codec, this handler, Hummingbird's upgrader (its connection task
    /// ends) and the first-request guard.
    private func switchToWebSocket(_ context: ChannelHandlerContext, bridge: WebSocketBridge) {
        let operations = context.pipeline.syncOperations
        do {
            // Socket side first: the encoder must see what the bridge writes.
            let side = WebSocketSideHandler(side: .client, bridge: bridge)
            try operations.addHandlers([WebSocketFrameEncoder(), WebSocketFrameReadingHandler(maxFrameSize: gateway.maxMessageSize, side: side), side],
                                       position: .after(self))
            if let upgrader = try? operations.handler(type: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self) {
                operations.removeHandler(upgrader, promise: nil)
            }
            if let guardHandler = try? operations.handler(type: MalformedFirstRequestHandler.self) { operations.removeHandler(guardHandler, promise: nil) }
            operations.removeHandler(try operations.handler(type: HTTPResponseEncoder.self), promise: nil)
            operations.removeHandler(try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self), promise: nil)
            let channel = context.channel
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

    /// Hands a first request asking for an upgrade, and the rest of the connection, to Hummingbird.
    private func handOver(_ head: HTTPRequestHead) {
        guard let context else { return }
        exchange = nil
        removed = true
        idleTimer?.cancel()
        idleTimer = nil
        context.fireChannelRead(wrapInboundOut(.head(head)))
        while let part = queue.popFirst() { context.fireChannelRead(wrapInboundOut(part)) }
        context.fireChannelReadComplete()
        if readHeld {
            readHeld = false
            context.read()
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
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
            let forwarding = forwarding(exchange)
            let base = route.service.base
            let (head, chunked) = UpstreamRequestHead.make(
                from: exchange.head, target: base.target(path: route.remainder.path, query: Gateway.forwardedQuery(route.target, service: route.service)),
                authority: base.authority, realm: route.service.realm, forwarding: forwarding, user: subject?.name,
                allocator: context?.channel.allocator ?? ByteBufferAllocator())
            exchange.upstreamHead = head
            exchange.upstreamChunked = chunked
            connect(exchange, fresh: false)
        }
    }

    /// The forwarding fields of `exchange`. They depend only on its `Host` when the peer is not a trusted proxy:
    /// the last ones are kept for the connection's next request.
    private func forwarding(_ exchange: Exchange) -> ForwardingHeaders {
        let host = exchange.head.headers.first(name: "host")
        if !peerIsTrusted, let lastForwarding, lastForwarding.host == host { return lastForwarding.fields }
        if exchange.fieldsPending {
            exchange.fieldsPending = false
            exchange.fields = UpstreamRequestHead.admissionFields(exchange.head.headers, realm: exchange.route?.service.realm)
        }
        let fields = ForwardingHeaders(headers: exchange.fields, host: host, peer: peer, trusted: gateway.trustedProxies,
                                       proto: gateway.tls == nil ? "http" : "https")
        if !peerIsTrusted { lastForwarding = (host, fields) }
        return fields
    }

    private func connect(_ exchange: Exchange, fresh: Bool) {
        guard let pool, let route = exchange.route else { return }
        exchange.phase = .connecting
        let base = route.service.base
        pool.acquire(UpstreamKey(host: base.host, port: base.port, tls: base.scheme == "https"), fresh: fresh) { [self] result in
            guard self.exchange === exchange, !closing, exchange.phase == .connecting else {
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
                gateway.logger.debug("upstream unavailable", metadata: ["service": .string(exchange.service), "error": .string("\(error)")])
                upstreamUnavailable(exchange)
            case .success(let connection):
                attach(exchange, to: connection)
            }
        }
    }

    private func attach(_ exchange: Exchange, to upstream: UpstreamConnection) {
        guard let head = exchange.upstreamHead else { return }
        exchange.upstream = upstream
        exchange.reused = upstream.exchanges > 0
        upstream.exchanges += 1
        upstream.handler.exchange = self
        upstream.handler.requestWasHEAD = exchange.head.method == .HEAD
        upstream.handler.dechunk = exchange.head.version == .http1_0
        exchange.phase = .relaying
        upstream.write(head)
        let waiting = exchange.waiting
        exchange.waiting = []
        for part in waiting { forward(part, of: exchange, to: upstream) }
        upstream.flush()
        upstreamFlushPending = false
        if !(context?.channel.isWritable ?? true) { upstream.handler.pauseReads() }
        resumeReadsIfPossible()
    }

    /// The upstream could not be reached or dropped the request before answering: `502` (or `400` when the
    /// client's own body failed).
    private func upstreamUnavailable(_ exchange: Exchange) {
        if exchange.bodyFailed {
            answer(exchange, GatewayAnswer.invalidRequest("the request body is malformed or incomplete"))
            return
        }
        gateway.statistics.upstreamError(service: exchange.service, protocol: "http")
        send(exchange, status: 502, ["Content-Type": "text/plain; charset=utf-8"], ByteBuffer(string: "502 Bad Gateway\n"))
    }

    // MARK: The upstream's side

    func upstreamHead(_ head: HTTPMessageHead, bytes: ByteBuffer) {
        guard let exchange, exchange.phase == .relaying, exchange.upstream != nil, let encoderContext,
              case .response(let status) = head.startLine else { return }
        exchange.responseStarted = true
        exchange.status = status
        let tokens = UpstreamRequestHead.connectionTokens(head, bytes: bytes)
        exchange.upstreamReusable = head.framing != .untilClose && UpstreamRequestHead.keepsAlive(head, tokens: tokens)
        let http10 = exchange.head.version == .http1_0
        // Without a length, the answer's end is the connection's for an HTTP/1.0 client (its chunks are taken off),
        // and for any client when the upstream ends its answer by closing.
        if http10, !head.hasContentLength { exchange.keepAlive = false }
        if head.framing == .untilClose { exchange.keepAlive = false }
        let response = UpstreamRequestHead.response(head, bytes: bytes, tokens: tokens, clientMinorVersion: http10 ? 0 : 1,
                                                    challenge: exchange.successChallenge,
                                                    close: !exchange.keepAlive || quiescing, keepTransferEncoding: !http10,
                                                    allocator: encoderContext.channel.allocator)
        progress.answered = true
        encoderContext.write(NIOAny(response), promise: nil)
    }

    func upstreamBody(_ bytes: ByteBuffer) {
        guard let exchange, exchange.phase == .relaying, let upstream = exchange.upstream, let encoderContext else { return }
        encoderContext.write(NIOAny(bytes), promise: nil)
        if !encoderContext.channel.isWritable { upstream.handler.pauseReads() }
    }

    func upstreamEnd(reusable: Bool) {
        guard let exchange, exchange.phase == .relaying, exchange.upstream != nil, let encoderContext else { return }
        if !reusable { exchange.upstreamReusable = false }
        if !exchange.keepAlive || quiescing {
            // The close waits for the answer's last bytes to be written.
            responseDone(exchange, written: encoderContext.writeAndFlush(NIOAny(encoderContext.channel.allocator.buffer(capacity: 0))))
        } else {
            encoderContext.flush()
            responseDone(exchange, written: nil)
        }
    }

    func upstreamReadComplete() {
        context?.flush()
    }

    func upstreamWritabilityChanged() {
        resumeReadsIfPossible()
    }

    func upstreamFailed() {
        guard let exchange, exchange.phase == .relaying, exchange.upstream != nil else { return }
        exchange.upstream = nil
        if !exchange.responseStarted {
            // A pooled connection the upstream had closed meanwhile: once more on a new one, if nothing of the
            // request was lost with it.
            if exchange.reused, !exchange.retried, !exchange.hasBody, !exchange.bodySent {
                exchange.retried = true
                exchange.waiting = exchange.requestEnded ? [.end(nil)] : []
                connect(exchange, fresh: true)
                return
            }
            upstreamUnavailable(exchange)
            return
        }
        // Mid-answer: the client's answer cannot be completed.
        gateway.statistics.upstreamError(service: exchange.service, protocol: "http")
        gateway.statistics.request(service: exchange.service, status: exchange.status, duration: ContinuousClock.now - exchange.start)
        self.exchange = nil
        close()
    }

    // MARK: Answers and the end of an exchange

    private static func headers(_ fields: HTTPFields) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for field in fields { headers.add(name: field.name.rawName, value: field.value) }
        return headers
    }

    private func answer(_ exchange: Exchange, _ answer: GatewayAnswer) {
        send(exchange, status: answer.status.code, Self.headers(answer.headers), answer.body)
    }

    /// The gateway's own answer to `exchange`.
    private func send(_ exchange: Exchange, status: Int, _ headers: HTTPHeaders, _ body: ByteBuffer) {
        guard let context, !exchange.responseStarted else { return }
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            upstream.close()
        }
        exchange.phase = .answered
        exchange.responseStarted = true
        exchange.status = status
        var headers = headers
        headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        if !exchange.keepAlive || quiescing { headers.replaceOrAdd(name: "Connection", value: "close") }
        progress.answered = true
        let version: HTTPVersion = exchange.head.version == .http1_0 ? .http1_0 : .http1_1
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .init(statusCode: status), headers: headers))), promise: nil)
        if body.readableBytes > 0, exchange.head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        responseDone(exchange, written: context.writeAndFlush(wrapOutboundOut(.end(nil))))
    }

    /// The answer's last part is written (`written`: when it is, needed only when the connection closes after it).
    private func responseDone(_ exchange: Exchange, written: EventLoopFuture<Void>?) {
        exchange.responseEnded = true
        // The idle time between requests counts from the end of the answer.
        lastRead = .now()
        if !exchange.requestEnded {
            // The client is still sending: its upstream connection cannot be reused; the rest is read and dropped.
            exchange.phase = .answered
            if let upstream = exchange.upstream {
                exchange.upstream = nil
                upstream.close()
            }
        }
        if !exchange.keepAlive || quiescing {
            self.exchange = nil
            finish(exchange)
            closing = true
            let drain = !exchange.requestEnded
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
        guard exchange.requestEnded, exchange.responseEnded, self.exchange === exchange else { return }
        self.exchange = nil
        finish(exchange)
        startNext()
    }

    /// Counts the exchange and gives its upstream connection back (or closes it).
    private func finish(_ exchange: Exchange) {
        if exchange.counted {
            gateway.statistics.request(service: exchange.service, status: exchange.status, duration: ContinuousClock.now - exchange.start)
        }
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            if exchange.upstreamReusable, exchange.requestEnded, exchange.responseEnded {
                pool?.release(upstream)
            } else {
                upstream.close()
            }
        }
    }

    /// Drops an exchange whose client went away.
    private func abandon(_ exchange: Exchange) {
        self.exchange = nil
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            upstream.close()
        }
    }

    private func close() {
        guard !closing, let context else { return }
        closing = true
        idleTimer?.cancel()
        idleTimer = nil
        context.close(promise: nil)
    }

    // MARK: The idle timeout

    /// Closes the connection once it has read nothing for the idle timeout while idle between requests or inside
    /// a request's body; an exchange waiting for its upstream is the upstream's read timeout's business.
    private func armIdleTimer() {
        guard idleTimer == nil, let context else { return }
        scheduleIdleCheck(context, at: lastRead + idleTimeout)
    }

    private func scheduleIdleCheck(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        // Holds `self` until it runs or is cancelled (`close`, `channelInactive`, `handlerRemoved` cancel it): no weak
        // reference, which would put every retain and release of the handler on the runtime's slow path.
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.idleTimer = nil
            guard !self.closing, !self.removed, let context = self.context else { return }
            let due = self.lastRead + self.idleTimeout
            let waitingForUpstream = self.exchange.map { $0.requestEnded || $0.phase == .deciding || $0.phase == .connecting } ?? false
            if waitingForUpstream || due > .now() {
                self.scheduleIdleCheck(context, at: waitingForUpstream ? .now() + self.idleTimeout : due)
                return
            }
            self.gateway.logger.debug("closing an idle connection")
            self.close()
        }
    }
}
