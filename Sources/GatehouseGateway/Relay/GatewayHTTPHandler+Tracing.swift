import GatehouseChecks
import GatehouseHTTP
import GatehouseProtocol
import HTTPTypes
import Tracing

// The spans of a relayed exchange, when the gateway traces (``Gateway/tracer``): a server span from the request's
// route to the end of its answer; its admission (the realm's login chain, with its bcrypt runs) and its upstream
// exchange (a client span, whose ids the upstream gets as `traceparent`) as children.

extension GatewayHTTPHandler {
    /// Starts the server span of `exchange` for `route`, under the caller's `traceparent` when the peer is a trusted
    /// proxy (anyone else's is not believed, and is replaced upstream by ours).
    func startSpan(_ exchange: GatewayExchange, route: GatewayRoute, tracer: OTLPTracer) {
        var parent = InstrumentationContext.topLevel
        if peerIsTrusted, let field = exchange.head.first("traceparent"), let caller = TraceParent(field) { parent.traceParent = caller }
        let method = exchange.head.methodName
        let span = tracer.startSpan("\(method) \(route.service.path)", context: parent, ofKind: .server)
        span.updateAttributes { attributes in
            attributes["http.request.method"] = method
            attributes["url.path"] = route.target.path
            attributes["http.route"] = route.service.path
            attributes["gatehouse.service"] = route.service.name
            attributes["client.address"] = peer
        }
        exchange.span = span
    }

    /// Starts the client span of the upstream exchange; its `traceparent`, for the upstream's request head.
    func startUpstreamSpan(_ exchange: GatewayExchange, route: GatewayRoute) -> String? {
        guard let tracer = gateway.tracer, let parent = exchange.span else { return nil }
        let span = tracer.startSpan("\(exchange.head.methodName) upstream", context: parent.context, ofKind: .client)
        span.updateAttributes { attributes in
            attributes["server.address"] = route.service.base.authority
            attributes["url.full"] = route.service.upstream.absoluteString
        }
        exchange.upstreamSpan = span
        return span.ids.text
    }

    /// Ends the exchange's spans with its status (`0`: no answer was written).
    func endSpans(_ exchange: GatewayExchange) {
        if let upstream = exchange.upstreamSpan {
            exchange.upstreamSpan = nil
            if exchange.state.responseStarted { upstream.attributes["http.response.status_code"] = exchange.status }
            if !exchange.state.responseStarted || exchange.status >= 500 { upstream.setStatus(.init(code: .error)) }
            upstream.end()
        }
        if let span = exchange.span {
            exchange.span = nil
            if exchange.status > 0 { span.attributes["http.response.status_code"] = exchange.status }
            if exchange.status == 0 || exchange.status >= 500 { span.setStatus(.init(code: .error)) }
            span.end()
        }
    }
}
