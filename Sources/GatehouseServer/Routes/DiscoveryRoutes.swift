import GatehouseProtocol
import Hummingbird

/// Standard discovery beside the MobileFirst endpoints: the JWKS of the token keys (RFC 7517) and the
/// authorization-server metadata (RFC 8414).
struct DiscoveryRoutes<Context: RequestContext> {
    let signer: TokenSigner

    func add(to router: Router<Context>) {
        let jwks = signer.jwks
        router.get(".well-known/jwks.json") { _, _ in JSONBody.response(.ok, jwks, headers: [.cacheControl: "max-age=300"]) }
        router.get("mfp/api/az/v1/jwks") { _, _ in JSONBody.response(.ok, jwks, headers: [.cacheControl: "max-age=300"]) }
        router.get(".well-known/oauth-authorization-server") { request, _ in
            let base = "http://\(request.head.authority ?? "localhost")"
            let api = base + "/mfp/api"
            let metadata: JSON = [
                "issuer": .string(base),
                "authorization_endpoint": .string(api + "/az/v1/authorization"),
                "token_endpoint": .string(api + "/az/v1/token"),
                "introspection_endpoint": .string(api + "/az/v1/introspection"),
                "revocation_endpoint": .string(api + "/az/v1/revoke"),
                "jwks_uri": .string(base + "/.well-known/jwks.json"),
                "registration_endpoint": .string(api + "/registration/v1/self"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "client_credentials"],
                "token_endpoint_auth_methods_supported": ["private_key_jwt", "client_secret_basic"],
                "token_endpoint_auth_signing_alg_values_supported": ["RS256"],
                "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "bearer"],
                "revocation_endpoint_auth_methods_supported": ["private_key_jwt", "client_secret_basic"],
                "code_challenge_methods_supported": [],
            ]
            return JSONBody.response(.ok, metadata)
        }
    }
}
