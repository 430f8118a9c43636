import HummingbirdBcrypt

/// A user of a ``UsersLoginModule``: a bcrypt hash of the password and the roles granted.
public struct GatewayUser: Sendable, Codable, Equatable {
    public var username: String
    public var passwordHash: String
    public var roles: [String]

    public init(username: String, passwordHash: String, roles: [String] = []) {
        self.username = username
        self.passwordHash = passwordHash
        self.roles = roles
    }
}

/// Checks `Basic` user names and passwords against a list of users with bcrypt hashes (the KAAZING `file` module).
public struct UsersLoginModule: LoginModule {
    private let users: [String: GatewayUser]
    /// Checked for unknown users too, so that their answer takes as long as a known user's.
    private static let decoyHash = Bcrypt.hash("gatehouse-gateway-decoy", cost: 10)

    public init(users: [GatewayUser]) {
        self.users = Dictionary(users.map { ($0.username, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult {
        guard let (username, password) = credentials.basic else {
            return credentials.isEmpty ? .failure("no credentials") : .ignore
        }
        let user = users[username]
        let valid = Bcrypt.verify(password, hash: user?.passwordHash ?? Self.decoyHash) && user != nil
        guard valid, let user else { return .failure("wrong user name or password") }
        return .success(Subject(name: user.username, roles: Set(user.roles)))
    }
}

extension GatewayUser {
    /// A user whose password is hashed here (bcrypt, `cost` rounds).
    public static func hashing(username: String, password: String, roles: [String] = [], cost: UInt8 = 10) -> GatewayUser {
        GatewayUser(username: username, passwordHash: Bcrypt.hash(password, cost: cost), roles: roles)
    }
}
