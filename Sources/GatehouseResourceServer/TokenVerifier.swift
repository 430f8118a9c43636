import Foundation
import GatehouseProtocol

/// Decides whether a bearer token is valid now, and what it grants.
public protocol TokenVerifier: Sendable {
    /// The verified token, or ``TokenRejection/invalidToken`` (or ``TokenRejection/conflict``).
    func verify(_ token: String) async throws(TokenRejection) -> VerifiedToken
}

extension TokenVerifier {
    /// Checks an `Authorization` header value against a required scope.
    public func authorize(authorization: String?, scope required: Scope) async throws(TokenRejection) -> VerifiedToken {
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else { throw .missing }
        let token = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, !token.contains(" ") else { throw .missing }
        let verified = try await verify(token)
        guard verified.scope.contains(required) else { throw .insufficientScope(required) }
        return verified
    }
}
