import GatehouseChecks
import HTTPTypes
import GatehouseHTTP
import Logging
import Metrics
import NIOCore
import NIOHTTPTypes

/// Requests answered on the connection's event loop when memory alone can answer them, before a request's task, the
/// router and its middleware see them: an introspection whose caller, token and client were all
/// checked or read before costs a resource server half of what it costs through the router (the benchmark's
/// "NIO alone" row against "Hummingbird alone").
///
/// A route's ``Route/respond`` gets the request's head and whole body (up to ``maxBody``) and returns the answer, or
/// `nil` to hand the request on unchanged: to the router, which does everything that needs a store read, a bcrypt
/// run, a signature check or an error answer. So the loop never waits and never answers differently: it answers
/// only what the router would answer the same, with the same headers (`Date` and ``serverName`` included), counted in the
/// same request metrics.
///
/// Only HTTP/1.x, plain or over TLS (not HTTP/2 streams); requests with an `Origin` (CORS), an `Expect` or a `Connection`
/// field go to the router.
struct LoopAnswers: Sendable {
    /// An answer from memory: always `200 OK` (any other answer is the router's).
    struct Answer: Sendable {
        var headers: HTTPFields
        var body: ByteBuffer
    }

    /// A request collected whole.
    struct Request {
        let head: HTTPRequest
        let body: ByteBuffer
        /// The client's address (the peer's, or the one a trusted proxy names), as the router's context has it.
        let clientAddress: String?
    }

    /// A route answered from memory when it can be.
    struct Route: Sendable {
        let method: HTTPRequest.Method
        /// The request target, compared whole (a query sends the request to the router).
        let path: String
        /// The route's template in the request metrics (what the router's ``RequestMetricsMiddleware`` counts).
        let template: String
        let respond: @Sendable (Request) -> Answer?
        /// Its `200` answers' request metrics and its count of answers on the loop, looked up once (``LoopAnswers``).
        fileprivate var counted: (ok: KeyedMetricHandles<GatehouseMetrics.RequestKey>.Handles, onTheLoop: Metrics.Counter)?

        init(method: HTTPRequest.Method, path: String, template: String, respond: @escaping @Sendable (Request) -> Answer?) {
            self.method = method
            self.path = path
            self.template = template
            self.respond = respond
        }
    }

    let routes: [Route]
    /// The `Server` field the application adds to every answer.
    let serverName: String?
    /// The `Date` field every answer carries.
    let date = HTTPDate()
    /// The largest body kept to be answered from memory; a larger one goes to the router as it comes.
    var maxBody = 16 * 1024
    /// Whose forwarding fields name the client (as for the router).
    let trustedProxies: TrustedProxies

    init(routes: [Route], serverName: String?, metrics: GatehouseMetrics, trustedProxies: TrustedProxies = .none) {
        self.trustedProxies = trustedProxies
        self.routes = routes.map { route in
            var route = route
            route.counted = (metrics.requestHandles(route: route.template, method: route.method.rawValue, status: 200),
                             metrics.loopAnswers(route: route.template))
            return route
        }
        self.serverName = serverName
    }

    /// The route that may answer `request` from memory. Not for a request with an `Origin` (CORS is the router's),
    /// an `Expect`, or a `Connection` field (the router's handler closes the connection after a `close`).
    func route(for request: HTTPRequest) -> Route? {
        guard request.headerFields[.origin] == nil, request.headerFields[.expect] == nil, request.headerFields[.connection] == nil
        else { return nil }
        return routes.first { $0.method == request.method && $0.path == request.path }
    }
}

/// The handler of ``LoopAnswers`` in a connection's pipeline (``ServeFront``), just before the router's handler.
///
/// Answers keep the requests' order: a request is answered here only when no request handed to the router is still
/// unanswered on this connection (``waiting``); otherwise it is handed on too, and answered in turn.
final class LoopAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum State {
        /// Between requests, or in one handed on.
        case passing
        /// Collecting a request of `route` to answer it at its end.
        case collecting(HTTPRequest, ByteBuffer, LoopAnswers.Route, start: ContinuousClock.Instant)
    }

    private let answers: LoopAnswers
    private var state = State.passing
    /// The connection's peer as text, formatted once for the connection (not per request).
    private var peer: String??
    /// Requests handed to the router and not answered yet.
    private var waiting = 0

    init(_ answers: LoopAnswers) {
        self.answers = answers
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if waiting == 0, let route = answers.route(for: request) {
                state = .collecting(request, context.channel.allocator.buffer(capacity: 0), route, start: .now)
            } else {
                handOn(context: context, request)
            }
        case .body(let part):
            guard case .collecting(let request, var body, let route, let start) = state else { return context.fireChannelRead(data) }
            guard body.readableBytes + part.readableBytes <= answers.maxBody else {
                handOn(context: context, request, body)
                return context.fireChannelRead(data)
            }
            state = .passing   // the buffer uniquely referenced while it grows
            body.writeImmutableBuffer(part)
            state = .collecting(request, body, route, start: start)
        case .end:
            guard case .collecting(let request, let body, let route, let start) = state else { return context.fireChannelRead(data) }
            state = .passing
            // The client as ``RequestSourceMiddleware`` names it for the router: a remembered secret is not accepted
            // from a locked source.
            if peer == nil { peer = .some(context.channel.remoteAddress?.ipAddress) }
            let client = answers.trustedProxies.client(peer: peer ?? nil, fields: request.headerFields).address
            let answered = RequestSource.$address.withValue(client) {
                route.respond(LoopAnswers.Request(head: request, body: body, clientAddress: client))
            }
            guard let answer = answered else {
                handOn(context: context, request, body)
                return context.fireChannelRead(data)
            }
            var headers = answer.headers
            headers[.contentLength] = String(answer.body.readableBytes)
            headers[.date] = answers.date.now
            if let serverName = answers.serverName { headers[.server] = serverName }
            context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: headers))), promise: nil)
            if answer.body.readableBytes > 0 { context.write(wrapOutboundOut(.body(answer.body)), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            if let counted = route.counted {   // set for every route by `LoopAnswers.init`
                counted.ok.counter.increment()
                counted.ok.timer.record(.now - start)
                counted.onTheLoop.increment()
            }
        }
    }

    /// Hands `request` (and what was collected of its body) to the router.
    private func handOn(context: ChannelHandlerContext, _ request: HTTPRequest, _ body: ByteBuffer? = nil) {
        state = .passing
        waiting += 1
        context.fireChannelRead(wrapInboundOut(.head(request)))
        if let body, body.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(body))) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { waiting = max(waiting - 1, 0) }
        context.write(data, promise: promise)
    }
}
