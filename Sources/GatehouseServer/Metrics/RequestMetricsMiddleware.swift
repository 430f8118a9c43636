import Hummingbird

/// Counts every answer by route template, method and status, with its latency. Added before the routes, so it
/// sees them all; an unrouted request counts as route `NotFound` (Hummingbird's name).
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: GatehouseMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let method = request.method.rawValue.count <= 16 ? request.method.rawValue : "other"
        do {
            let response = try await next(request, context)
            metrics.request(route: context.endpointPath ?? "unknown", method: method, status: Int(response.status.code),
                            duration: ContinuousClock.now - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.request(route: context.endpointPath ?? "unknown", method: method, status: Int(status), duration: ContinuousClock.now - start)
            throw error
        }
    }
}
