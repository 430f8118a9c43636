public import Foundation
public import GatehouseProtocol

/// Decides whether a bearer token is valid now, and what it grants.
public protocol TokenVerifier: Sendable {
    /// The verified token, or ``TokenRejection/invalidToken`` (or ``TokenRejection/conflict``).
    func verify(_ token: String) async throws(TokenRejection) -> VerifiedToken

    /// What ``verify(_:)`` would answer for a token this verifier remembers as valid now, without suspending
    /// (no key set to fetch, no server to ask), and until when it will answer so without asking — never later than
    /// the token's expiry; `nil` when it would have to ask. The gateway admits such a request on its connection's
    /// event loop, and when `until` is the token's expiry, lets the connection remember the admission until then.
    /// The default is `nil`: every token is verified on a task.
    func rememberedVerification(of token: String) -> (token: VerifiedToken, until: Date)?
}

extension TokenVerifier {
    public func rememberedVerification(of token: String) -> (token: VerifiedToken, until: Date)? { nil }

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
