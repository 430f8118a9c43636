/// A user that `UserLogin` can authenticate: a name, a bcrypt hash of the password and attributes.
public struct UserRecord: Codable, Sendable, Equatable {
    public var username: String
    public var displayName: String
    /// A bcrypt hash (`$2b$...`); the password itself is never stored.
    public var passwordHash: String
    public var attributes: [String: String]

    public init(username: String, displayName: String, passwordHash: String, attributes: [String: String] = [:]) {
        self.username = username
        self.displayName = displayName
        self.passwordHash = passwordHash
        self.attributes = attributes
    }
}

/// Where user-authenticating checks look users up.
public protocol UserDirectory: Sendable {
    /// The user called `username`, or `nil`.
    func user(named username: String) async throws -> UserRecord?
}

/// The services a check may use, handed to its factory.
public struct SecurityCheckServices: Sendable {
    public var users: any UserDirectory
    /// Password checks with per-account lockout and decoy hashing.
    public var passwords: PasswordVerifier
    /// Users' enrolled factors (``TOTP``'s secrets), shared by every node through the store.
    public var factors: any UserFactorStore
    /// Values accepted once across every node (``TOTP``'s codes).
    public var oneTimeUses: OneTimeUses

    public init(users: any UserDirectory, passwords: PasswordVerifier? = nil, factors: (any UserFactorStore)? = nil,
                oneTimeUses: OneTimeUses? = nil) {
        self.users = users
        self.passwords = passwords ?? PasswordVerifier(lockouts: InMemoryAccountLockouts(policy: .disabled), decoyCost: 10)
        self.factors = factors ?? InMemoryUserFactors()
        self.oneTimeUses = oneTimeUses ?? .inMemory()
    }
}
