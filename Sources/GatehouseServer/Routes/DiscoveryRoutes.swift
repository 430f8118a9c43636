import GatehouseProtocol
import Hummingbird

/// Standard discovery beside the MobileFirst endpoints: the JWKS of the token keys (RFC 7517) and the
/// authorization-server metadata (RFC 8414).
struct DiscoveryRoutes<Context: RequestContext> {
    let signer: TokenSigner
    /// The `iss` of every token this server issues, and its public base URL.
    let issuer: IssuerName
    /// The policy in force: when an OpenID client signs its id_tokens RS256, the JWKS has the RS256 key before any
    /// id_token is signed (a relying party may fetch the keys first).
    let policies: PolicyInForce

    func add(to router: Router<Context>) {
        let signer = self.signer
        let policies = self.policies
        @Sendable func jwks() async throws -> Response {
            if policies.current.policy.openIDClients.values.contains(where: { $0.signingAlgorithm == .rs256 }) { try await signer.ensureRSAKey() }
            // Read per request (re-read from the store when stale): keys rotated or retired on another node show at once.
            return JSONBody.response(.ok, await signer.currentJWKS(), headers: [.cacheControl: "max-age=60"])
        }
        router.get(".well-known/jwks.json") { _, _ in try await jwks() }
        router.get("mfp/api/az/v1/jwks") { _, _ in try await jwks() }
        let issuer = self.issuer
        router.get(".well-known/oauth-authorization-server") { _, _ in
            let base = issuer.current
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
                "token_endpoint_auth_methods_supported": ["private_key_jwt", "client_secret_basic", "tls_client_auth", "self_signed_tls_client_auth"],
                "tls_client_certificate_bound_access_tokens": true,
                "token_endpoint_auth_signing_alg_values_supported": ["RS256"],
                "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "bearer"],
                "revocation_endpoint_auth_methods_supported": ["private_key_jwt", "client_secret_basic"],
                "code_challenge_methods_supported": [],
            ]
            return JSONBody.response(.ok, metadata)
        }
    }
}
