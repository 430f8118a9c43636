import GatehouseProtocol
import GatehouseResourceServer

/// Accepts Gatehouse access tokens (`Authorization: Token <jwt>` or `Bearer <jwt>`, or a declared header, query
/// parameter or cookie), checked by a ``TokenVerifier`` (JWKS or introspection). The roles are the scope's
/// elements; the subject expires with the token.
public struct GatehouseTokenLoginModule: LoginModule {
    let verifier: any TokenVerifier
    let requiredScope: Scope?

    /// - Parameter requiredScope: scope elements every token must hold (in addition to service roles).
    public init(verifier: any TokenVerifier, requiredScope: String? = nil) {
        self.verifier = verifier
        self.requiredScope = requiredScope.map { Scope($0) }
    }

    public func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult {
        let base = scheme == .applicationToken || scheme == .bearer ? scheme.baseScheme : "Token"
        let token = credentials.secret(baseScheme: base)
            ?? (credentials.scheme.map { ["token", "bearer"].contains($0.lowercased()) } == true ? credentials.value : nil)
        guard let token, !token.isEmpty else { return credentials.isEmpty ? .failure("no token") : .ignore }
        do {
            let verified = try await verifier.verify(token)
            if let requiredScope, !verified.scope.contains(requiredScope) { return .failure("insufficient scope") }
            return .success(Subject(name: verified.userID ?? verified.clientID, roles: verified.scope.elements, expiresAt: verified.expiresAt))
        } catch {
            return .failure("invalid or expired token")
        }
    }
}
