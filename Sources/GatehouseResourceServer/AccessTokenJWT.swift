public import GatehouseProtocol
public import JWTKit

/// `AccessTokenClaims` as jwt-kit signs and verifies them: the signature and algorithm are checked by the key
/// collection, the expiry here. The authorization server signs with it; resource servers verify with it.
public struct AccessTokenJWT: JWTPayload {
    public var claims: AccessTokenClaims

    public init(_ claims: AccessTokenClaims) { self.claims = claims }

    public init(from decoder: any Decoder) throws { claims = try AccessTokenClaims(from: decoder) }

    public func encode(to encoder: any Encoder) throws { try claims.encode(to: encoder) }

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        guard !claims.isExpired() else {
            throw JWTError.claimVerificationFailure(failedClaim: ExpirationClaim(value: claims.expiresAt), reason: "expired")
        }
    }
}
