public import Foundation
public import GatehouseProtocol

/// What a resource server knows of a caller once its token is accepted.
public struct VerifiedToken: Sendable, Equatable {
    /// The token's scope.
    public var scope: Scope
    /// The client registration (or confidential client) the token was issued to.
    public var clientID: String
    /// The authenticated user's id, if a check authenticated one.
    public var userID: String?
    /// The checks whose success granted the token.
    public var checks: [String]
    /// When the token expires.
    public var expiresAt: Date
    /// The thumbprint (`x5t#S256`) of the TLS client certificate the token is bound to (RFC 8705): only a request on
    /// a connection that presented that certificate may use it (``RequireScope`` refuses it otherwise).
    public var certificateThumbprint: String?
    /// The authentication context class the token's checks proved (RFC 9470's `acr`), if the policy names one.
    public var acr: String?
    /// When the token's user authenticated (RFC 9470's `auth_time`), if a user did.
    public var authTime: Date?

    public init(scope: Scope, clientID: String, userID: String?, checks: [String], expiresAt: Date, certificateThumbprint: String? = nil,
                acr: String? = nil, authTime: Date? = nil) {
        self.scope = scope
        self.clientID = clientID
        self.userID = userID
        self.checks = checks
        self.expiresAt = expiresAt
        self.certificateThumbprint = certificateThumbprint
        self.acr = acr
        self.authTime = authTime
    }
}

extension VerifiedToken {
    /// Whether the token's authentication is strong and recent enough at `now` (RFC 9470): its `acr` one of
    /// `acrValues` (any, when empty) and its user authenticated at most `maxAge` seconds ago (any time, when `nil`).
    public func meets(acrValues: [String], maxAge: Int?, at now: Date = Date()) -> Bool {
        if !acrValues.isEmpty, !(acr.map(acrValues.contains) ?? false) { return false }
        if let maxAge {
            guard let authTime, now.timeIntervalSince(authTime) <= TimeInterval(maxAge) else { return false }
        }
        return true
    }
}
