import GatehouseProtocol
import GatehouseResourceServer
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
                    do throws(TokenRejection) {
                        claims = try await validator.validate(authorization: request.headers.value(of: .authorization), scope: required)
                        // A token bound to a TLS client certificate (RFC 8705 §3) only on a connection that presents it.
                        try await PresentedCertificate.check(binding: claims.cnf?.x5tS256, of: context)
                    } catch {
                        return Self.refusal(error)
                    }
                    return try await route.handler(request, ResourceContext(token: claims, logger: context.logger))
                }
            }
        }
    }

    static func refusal(_ error: TokenRejection) -> Response {
        let message = switch error.code {
        case .missing: "A bearer token is required."
        case .insufficientScope: "The token's scope does not hold \((error.scope ?? Scope(nil)).normalized)."
        default: "The token is invalid, expired or revoked."
        }
        return JSONBody.response(
            HTTPResponse.Status(code: error.status), OAuthErrorResponse(error: error.code.description, errorDescription: message),
            headers: [.wwwAuthenticate: error.challenge ?? BearerAnswer.invalidToken, .cacheControl: "no-store"])
    }
}
