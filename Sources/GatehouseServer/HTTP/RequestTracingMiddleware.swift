import GatehouseHTTP
import GatehouseProtocol
import HTTPTypes
import Hummingbird
import Tracing

/// A server span per request when tracing is on (``ServerConfiguration/tracer``), named `METHOD route` (OpenTelemetry's
/// HTTP conventions), with the request's security checks, store calls and bcrypt runs as its children
/// (`TracedWork`). A caller's `traceparent` is believed from the trusted proxies only (``ServerConfiguration/trustedProxies``):
/// anyone else starts no trace of ours, and cannot make us record one it chose.
struct RequestTracingMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    let tracer: OTLPTracer
    let trustedProxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var parent = InstrumentationContext.topLevel
        if trustedProxies.contains(context.peerAddress) {
            tracer.extract(request.headers, into: &parent, using: FieldsExtractor())
        }
        let method = request.method.rawValue
        let span = tracer.startSpan(method, context: parent, ofKind: .server)
        span.updateAttributes { attributes in
            attributes["http.request.method"] = method
            attributes["url.path"] = request.uri.path
            attributes["client.address"] = context.clientAddress
        }
        do {
            let response = try await withTracer(tracer) {
                try await InstrumentationContext.$current.withValue(span.context) { try await next(request, context) }
            }
            finish(span, method: method, context: context, status: Int(response.status.code))
            return response
        } catch {
            span.recordError(error)
            finish(span, method: method, context: context, status: Int((error as? any HTTPResponseError)?.status.code ?? 500))
            throw error
        }
    }

    private func finish(_ span: OTLPSpan, method: String, context: Context, status: Int) {
        if let route = context.endpointPath {
            span.operationName = "\(method) \(route)"
            span.attributes["http.route"] = route
        }
        span.attributes["http.response.status_code"] = status
        if status >= 500 { span.setStatus(.init(code: .error)) }
        span.end()
    }
}

/// Reads trace context fields from a request's fields.
struct FieldsExtractor: Extractor {
    func extract(key: String, from fields: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { fields[$0] }
    }
}
