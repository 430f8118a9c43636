import GatehouseChecks
import GatehouseHTTP
import Hummingbird

/// Names who the request comes from: the context's ``GatehouseRequestContext/clientAddress`` and
/// ``GatehouseRequestContext/forwardedHost`` (from a trusted proxy's forwarding fields, else the peer), and
/// ``RequestSource/address`` for everything the request runs, so that its password checks are throttled by the
/// client's address (``SourceThrottle``) rather than by the proxy's.
struct RequestSourceMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    let trustedProxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let client = trustedProxies.client(peer: context.peerAddress, fields: request.headers)
        context.clientAddress = client.address
        context.forwardedHost = client.host
        return try await RequestSource.$address.withValue(client.address) {
            try await next(request, context)
        }
    }
}
