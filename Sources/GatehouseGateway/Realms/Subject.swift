public import Foundation

/// Who a login chain authenticated: a name, roles (principal names) and when the credentials stop being valid.
public struct Subject: Sendable, Equatable {
    /// The user (or client) name, if a module named one.
    public var name: String?
    /// The roles that `require-role` constraints are checked against.
    public var roles: Set<String>
    /// When the credentials expire (a token's `exp`); `nil` when they do not.
    public var expiresAt: Date?
    /// A `WWW-Authenticate` value sent with the successful answer (or the WebSocket upgrade): Negotiate's
    /// mutual-authentication token, `Negotiate <base64>` (RFC 4559 §5).
    public var successChallenge: String?

    public init(name: String? = nil, roles: Set<String> = [], expiresAt: Date? = nil, successChallenge: String? = nil) {
        self.name = name
        self.roles = roles
        self.expiresAt = expiresAt
        self.successChallenge = successChallenge
    }

    /// Adds what another module found: roles are merged, the earliest expiry wins, the first name stays.
    mutating func merge(_ other: Subject) {
        if name == nil { name = other.name }
        if successChallenge == nil { successChallenge = other.successChallenge }
        // The first module's roles are taken as they are (a chain of one merges into an empty subject on every
        // request): no new set to hash them into.
        if roles.isEmpty { roles = other.roles } else { roles.formUnion(other.roles) }
        if let expiry = other.expiresAt { expiresAt = min(expiresAt ?? expiry, expiry) }
    }

    /// Whether the subject holds every required role (`*` = any authenticated subject).
    public func satisfies(_ required: [String]) -> Bool {
        required.allSatisfy { $0 == "*" || roles.contains($0) }
    }
}
