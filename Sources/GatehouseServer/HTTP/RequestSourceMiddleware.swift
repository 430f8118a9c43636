import GatehouseChecks
import Hummingbird

/// Names the request's source address (``RequestSource/address``) for everything the request runs, so that its
/// password checks are throttled by source (``SourceThrottle``). The address is the connection's peer.
struct RequestSourceMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await RequestSource.$address.withValue(context.remoteAddress?.ipAddress) {
            try await next(request, context)
        }
    }
}
