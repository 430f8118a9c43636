public import Foundation
import GatehouseProtocol

/// An OAuth access token for a scope, as the token endpoint issued it.
public struct AccessToken: Sendable, Hashable, Codable {
    /// The token itself.
    public let value: String
    /// The scope it grants, normalised (`"RegisteredClient accessRestricted"`).
    public let scope: String
    /// When it expires, by the local clock (`now + expires_in` when it was issued).
    public let expiresAt: Date
    /// When it was received, by the local clock.
    public let issuedAt: Date

    /// A token of `value` for `scope` (normalised here), received at `issuedAt` and expiring at `expiresAt`.
    public init(value: String, scope: String, expiresAt: Date, issuedAt: Date = Date()) {
        self.value = value
        self.scope = Scope(scope).normalized
        self.expiresAt = expiresAt
        self.issuedAt = min(issuedAt, expiresAt)
    }

    /// Whether it has expired.
    public var isExpired: Bool { expiresAt <= Date() }

    /// Whether it should be replaced at `now`: it expires within `margin` (at most half its lifetime, so that a
    /// short-lived token is still used for a while), as AppAuth replaces tokens a minute before their expiry.
    public func needsRefresh(margin: Duration, at now: Date = Date()) -> Bool {
        let (seconds, attoseconds) = margin.components
        let wanted = Double(seconds) + Double(attoseconds) / 1e18
        let lead = min(max(wanted, 0), expiresAt.timeIntervalSince(issuedAt) / 2)
        return now >= expiresAt.addingTimeInterval(-lead)
    }

    /// The token's claims as the server wrote them, read without verifying its signature (the server that issued
    /// it and the resources verify it): what the SDK learns of its `acr`, `auth_time` and checks. `nil` for a
    /// token that is not a Gatehouse JWS.
    public var claims: AccessTokenClaims? {
        try? JWS(compact: value).decodedPayload(as: AccessTokenClaims.self)
    }

    /// The `Authorization` header value: `Bearer <token>`.
    public var authorizationHeaderValue: String { "Bearer \(value)" }

    /// The form-body parameter: `access_token=<token>`.
    public var formEncodedBodyParameter: String { "access_token=\(FormEncoding.escape(value))" }
}
