import GatehouseChecks
import GatehouseStore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Turns every error into a JSON answer: a ``GatehouseError`` as it is, a refusal of the authorization service
/// (``AuthorizationError``) in the endpoint's shape, an operator's request refused (``AdminError``), a store outage (``StoreUnavailable``) and a
/// flood of password checks as `503` with `Retry-After`, one address's throttled password checks as `429` with
/// `Retry-After`, Hummingbird's own errors (an oversized body, say) with their
/// status, and anything else as a 500 that names no internals.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as GatehouseError {
            if error.status.code >= 500 { context.logger.error("\(request.method) \(request.uri.path): \(error)") }
            return try error.response(from: request, context: context)
        } catch let error as AuthorizationError {
            return try GatehouseError(error, oauth: Self.isOAuth(request)).response(from: request, context: context)
        } catch let error as AdminError {
            return try GatehouseError(error).response(from: request, context: context)
        } catch is BcryptFlights.Busy {
            // A flood of password checks: refused at once, to be tried again shortly (not a 500, not a wrong password).
            context.logger.warning("\(request.method) \(request.uri.path): refused, too many password checks waiting")
            let oauth = Self.isOAuth(request)
            return try GatehouseError(.serviceUnavailable, oauth ? "temporarily_unavailable" : "SERVER_BUSY",
                                      "Too many password checks are waiting; try again shortly.", style: oauth ? .oauth : .mobileFirst,
                                      headers: [.retryAfter: "1"]).response(from: request, context: context)
        } catch let error as SourceThrottle.Throttled {
            // One address's password checks: too many failed, or too many at once (never a wrong password, and
            // nothing about any account).
            let oauth = Self.isOAuth(request)
            return try GatehouseError(.tooManyRequests, oauth ? "too_many_requests" : "TOO_MANY_ATTEMPTS",
                                      "Too many failed attempts (or password checks at once) from this address; try again later.", style: oauth ? .oauth : .mobileFirst,
                                      headers: [.retryAfter: String(error.retryAfter)]).response(from: request, context: context)
        } catch let error as StoreUnavailable {
            // The database cannot answer now (restarting, frozen, full): to be tried again shortly, never a 500.
            StoreOutageLog.shared.record(error, logger: context.logger)
            return try GatehouseError(.serviceUnavailable, "STORE_UNAVAILABLE", "The server's store cannot answer now; try again shortly.",
                                      headers: [.retryAfter: "1"]).response(from: request, context: context)
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

extension ErrorMiddleware {
    /// Whether `request` is for one of the OAuth endpoints (token, introspection, revocation), whose errors take
    /// RFC 6749's shape (`{"error":..,"error_description":..}`).
    static func isOAuth(_ request: Request) -> Bool {
        ["/mfp/api/az/v1/token", "/mfp/api/az/v1/introspection", "/mfp/api/az/v1/revoke"].contains(request.uri.path)
    }
}

/// Answers a request for a path that routes serve but not with its method: `405` with `Allow` and a JSON error,
/// or, for `OPTIONS`, `204` with `Allow`. Other requests go on (to the `404`).
///
/// Add it to the router after every route: Hummingbird applies a middleware only to the routes added after it
/// and to the not-found answer, so this one runs only for requests that no route matched, and knows them all.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Answers `GET` on every routed path with that path's `Allow`.
    private let allowed: RouterResponder<Context>

    /// - Parameter headForGet: whether the router answers `HEAD` wherever it answers `GET`.
    init(routes: [Router<Context>.RouteDescription], headForGet: Bool) {
        var paths: [String: (path: RouterPath, methods: Set<String>)] = [:]
        for route in routes {
            paths[route.path.description, default: (route.path, [])].methods.insert(route.method.rawValue)
        }
        let lookup = Router(context: Context.self)
        for (path, methods) in paths.values {
            var methods = methods
            if headForGet, methods.contains("GET") { methods.insert("HEAD") }
            methods.insert("OPTIONS")
            let allow = methods.sorted().joined(separator: ", ")
            lookup.get(path) { _, _ in Response(status: .ok, headers: [.allow: allow]) }
        }
        allowed = lookup.buildResponder()
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var head = request.head
        head.method = .get
        guard let answer = try? await allowed.respond(to: Request(head: head, body: .init(buffer: ByteBuffer())), context: context),
            answer.status == .ok, let allow = answer.headers[.allow]
        else {
            return try await next(request, context)
        }
        if request.method == .options {
            return Response(status: .noContent, headers: [.allow: allow, .contentLength: "0"])
        }
        throw GatehouseError(
            .methodNotAllowed, "METHOD_NOT_ALLOWED", "Method \(request.method.rawValue.prefix(32)) is not allowed here; allowed: \(allow).",
            headers: [.allow: allow])
    }
}
