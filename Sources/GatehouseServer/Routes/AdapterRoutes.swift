import GatehouseProtocol
import HTTPTypes
import Hummingbird

/// Serves adapters' resources, checking each request's bearer token against the route's security first
/// (as MobileFirst's resource servers answer: 401 `Bearer`, 401 `invalid_token`, 403 `insufficient_scope` naming the scope).
struct AdapterRoutes<Context: RequestContext> {
    let adapters: [any Adapter]
    let validator: TokenValidator

    func add(to router: Router<Context>) {
        for adapter in adapters {
            let group = router.group(RouterPath("mfp/api/adapters/\(adapter.name)"))
            for route in adapter.routes {
                let required: Scope? = if case .scope(let scope) = route.security { Scope(scope) } else { nil }
                let validator = self.validator
                group.on(RouterPath(route.path), method: route.method) { request, context in
                    guard let required else {
                        return try await route.handler(request, ResourceContext(token: nil, logger: context.logger))
                    }
                    let claims: AccessTokenClaims
                    do throws(BearerError) {
                        claims = try await validator.validate(authorization: request.headers[.authorization], scope: required)
                    } catch {
                        return Self.refusal(error)
                    }
                    return try await route.handler(request, ResourceContext(token: claims, logger: context.logger))
                }
            }
        }
    }

    static func refusal(_ error: BearerError) -> Response {
        let (code, message): (String, String) = switch error {
        case .missing: ("invalid_request", "A bearer token is required.")
        case .invalidToken: ("invalid_token", "The token is invalid, expired or revoked.")
        case .insufficientScope(let scope): ("insufficient_scope", "The token's scope does not hold \(scope.normalized).")
        }
        return JSONBody.response(
            HTTPResponse.Status(code: error.status), ["error": code, "error_description": message],
            headers: [.wwwAuthenticate: error.challenge, .cacheControl: "no-store"])
    }
}
