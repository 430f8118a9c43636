import Foundation
import GatehouseProtocol

/// An OAuth access token for a scope, as the token endpoint issued it.
public struct AccessToken: Sendable, Hashable {
    /// The token itself.
    public let value: String
    /// The scope it grants, normalised (`"RegisteredClient accessRestricted"`).
    public let scope: String
    /// When it expires, by the local clock (`now + expires_in` when it was issued).
    public let expiresAt: Date

    /// A token of `value` for `scope` (normalised here), expiring at `expiresAt`.
    public init(value: String, scope: String, expiresAt: Date) {
        self.value = value
        self.scope = Scope(scope).normalized
        self.expiresAt = expiresAt
    }

    /// Whether it has expired.
    public var isExpired: Bool { expiresAt <= Date() }

    /// The `Authorization` header value: `Bearer <token>`.
    public var authorizationHeaderValue: String { "Bearer \(value)" }

    /// The form-body parameter: `access_token=<token>`.
    public var formEncodedBodyParameter: String { "access_token=\(FormEncoding.escape(value))" }
}
