import HTTPTypes
import Hummingbird
import Logging

/// Turns every error into a JSON answer: a ``GatehouseError`` as it is, Hummingbird's own errors (an oversized
/// body, say) with their status, and anything else as a 500 that names no internals.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as GatehouseError {
            if error.status.code >= 500 { context.logger.error("\(request.method) \(request.uri.path): \(error)") }
            return try error.response(from: request, context: context)
        } catch let error as HTTPError {
            let code = switch error.status {
            case .contentTooLarge: "REQUEST_TOO_LARGE"
            case .notFound: "NOT_FOUND"
            case .methodNotAllowed: "METHOD_NOT_ALLOWED"
            default: "INVALID_REQUEST"
            }
            let message = error.body ?? error.status.reasonPhrase
            return try GatehouseError(error.status, code, message, headers: error.headers).response(from: request, context: context)
        } catch {
            context.logger.error("\(request.method) \(request.uri.path) failed: \(String(reflecting: type(of: error)))")
            return try GatehouseError(.internalServerError, "SERVER_ERROR", "The server could not complete the request.")
                .response(from: request, context: context)
        }
    }
}
