import Foundation
import GatehouseProtocol
public import GatehouseResourceServer

/// Accepts Gatehouse access tokens (`Authorization: Token <jwt>` or `Bearer <jwt>`, or a declared header, query
/// parameter or cookie), checked by a `TokenVerifier` (JWKS or introspection). The roles are the scope's
/// elements; the subject expires with the token — or sooner, when `maxAge` ends its user's authentication first.
public struct GatehouseTokenLoginModule: LoginModule, RememberingLoginModule {
    let verifier: any TokenVerifier
    let requiredScope: Scope?
    let acrValues: [String]
    let maxAge: Int?

    /// - Parameters:
    ///   - verifier: checks a token's signature and claims (JWKS) or asks the server (introspection).
    ///   - requiredScope: scope elements every token must hold (in addition to service roles).
    ///   - acrValues: the authentication context classes accepted (RFC 9470 step-up); empty: any.
    ///   - maxAge: the most seconds since the token's user authenticated; `nil`: any.
    public init(verifier: any TokenVerifier, requiredScope: String? = nil, acrValues: [String] = [], maxAge: Int? = nil) {
        self.verifier = verifier
        self.requiredScope = requiredScope.map { Scope($0) }
        self.acrValues = acrValues
        self.maxAge = maxAge
    }

    public func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult {
        switch carried(credentials, scheme: scheme) {
        case .answer(let result):
            return result
        case .token(let token):
            do {
                return result(try await verifier.verify(token), credentials)
            } catch {
                return .failure("invalid or expired token")
            }
        }
    }

    /// A token the verifier remembers as valid (`TokenVerifier/rememberedVerification(of:)`), or credentials
    /// without a token, answered on the event loop; `nil` for a token to verify on a task.
    public func cachedLogin(_ credentials: Credentials, scheme: ChallengeScheme) -> LoginResult? {
        rememberedLogin(credentials, scheme: scheme)?.result
    }

    /// ``cachedLogin(_:scheme:)``, and for a token the verifier remembers until it expires (the JWKS verifier), the
    /// token's expiry as an instant: the subject's own expiry, which ``RememberedAdmission`` checks on the wall clock
    /// as the realm does, is then the memory's exact end. A kept answer that ends earlier (introspection's
    /// `cacheDuration`) is answered here request by request, never remembered by a connection: its end is a wall-clock
    /// time that an instant would not follow if the clock jumped.
    func rememberedLogin(_ credentials: Credentials, scheme: ChallengeScheme) -> (result: LoginResult, until: ContinuousClock.Instant?)? {
        switch carried(credentials, scheme: scheme) {
        case .answer(let result):
            return (result, nil)
        case .token(let token):
            guard let (verified, until) = verifier.rememberedVerification(of: token) else { return nil }
            guard until >= verified.expiresAt else { return (result(verified, credentials), nil) }
            return (result(verified, credentials), ContinuousClock.now.advanced(by: .seconds(verified.expiresAt.timeIntervalSinceNow)))
        }
    }

    /// What the credentials carry for `scheme`: a token to verify, or the answer without one.
    private enum Carried {
        case token(String)
        case answer(LoginResult)
    }

    private func carried(_ credentials: Credentials, scheme: ChallengeScheme) -> Carried {
        let base = scheme == .applicationToken || scheme == .bearer ? scheme.baseScheme : "Token"
        let token = credentials.secret(baseScheme: base)
            ?? (credentials.scheme.map { ["token", "bearer"].contains($0.lowercased()) } == true ? credentials.value : nil)
        guard let token, !token.isEmpty else { return .answer(credentials.isEmpty ? .failure("no token") : .ignore) }
        return .token(token)
    }

    /// The result for a verified token: its scope's elements as roles, expiring with it. A token bound to a TLS client
    /// certificate (RFC 8705) fails unless the request's connection presented that certificate.
    private func result(_ verified: VerifiedToken, _ credentials: Credentials) -> LoginResult {
        if let bound = verified.certificateThumbprint,
           !(credentials.certificateThumbprint.map { ConstantTime.equals($0, bound) } ?? false) {
            return .failure("token bound to a client certificate this connection did not present")
        }
        if let requiredScope, !verified.scope.contains(requiredScope) { return .failure("insufficient scope") }
        guard verified.meets(acrValues: acrValues, maxAge: maxAge) else {
            return .failure("insufficient user authentication")
        }
        var expiresAt = verified.expiresAt
        if let maxAge, let authTime = verified.authTime { expiresAt = min(expiresAt, authTime.addingTimeInterval(TimeInterval(maxAge))) }
        return .success(Subject(name: verified.userID ?? verified.clientID, roles: verified.scope.elements, expiresAt: expiresAt))
    }
}
