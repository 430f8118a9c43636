import JWTKit

/// The claims of a Gatehouse access token (a JWT signed with ES256).
///
/// `scope` is the granted scope without the application's mandatory elements; `checks` names the checks whose
/// success granted it, so that resource servers can ask whether they still do.
public struct AccessTokenClaims: JWTPayload, Equatable {
    public var iss: IssuerClaim
    public var sub: SubjectClaim
    public var aud: AudienceClaim?
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    /// Issued at, epoch milliseconds: revocations compare with it.
    public var iat_ms: Int64
    public var jti: IDClaim
    public var scope: String
    public var client_id: String
    /// The application: `{"id":..,"clientPlatform":..,"version":..}`; absent for confidential clients.
    public var app: AppClaim?
    public var checks: [String]
    /// The active user's id, if a check authenticated one.
    public var user: String?

    public struct AppClaim: Codable, Sendable, Equatable {
        public var id: String
        public var clientPlatform: String
        public var version: String?
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}
