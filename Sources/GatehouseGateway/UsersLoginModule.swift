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
///
/// A verified pair is remembered for `verifiedLifetime` (60 s by default, `.zero` to verify every request), so that
/// `Basic` credentials sent with every request do not cost a bcrypt verification each.
public struct UsersLoginModule: LoginModule {
    private let users: [String: GatewayUser]
    private let verified: VerifiedPasswordCache?
    /// Checked for unknown users too, at the users' own bcrypt cost, so that their answer takes as long as a known
    /// user's (a cheaper decoy would tell which user names exist).
    let decoyHash: String

    public init(users: [GatewayUser], verifiedLifetime: Duration = .seconds(60)) {
        self.users = Dictionary(users.map { ($0.username, $0) }, uniquingKeysWith: { first, _ in first })
        verified = verifiedLifetime > .zero ? VerifiedPasswordCache(lifetime: verifiedLifetime) : nil
        let cost = users.compactMap { Self.cost(of: $0.passwordHash) }.max() ?? 4  // no users: nothing to tell apart
        decoyHash = Bcrypt.hash("gatehouse-gateway-decoy", cost: cost)
    }

    /// The cost of a bcrypt hash (`$2b$12$...` is 12).
    static func cost(of hash: String) -> UInt8? {
        let parts = hash.split(separator: "$", omittingEmptySubsequences: true)
        guard parts.count >= 3, parts[0].hasPrefix("2"), let cost = UInt8(parts[1]), (4...31).contains(cost) else { return nil }
        return cost
    }

    public func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult {
        guard let (username, password) = credentials.basic else {
            return credentials.isEmpty ? .failure("no credentials") : .ignore
        }
        if let subject = verified?.subject(username: username, password: password) { return .success(subject) }
        let user = users[username]
        let valid = Bcrypt.verify(password, hash: user?.passwordHash ?? decoyHash) && user != nil
        guard valid, let user else { return .failure("wrong user name or password") }
        let subject = Subject(name: user.username, roles: Set(user.roles))
        verified?.remember(username: username, password: password, subject: subject)
        return .success(subject)
    }
}

extension GatewayUser {
    /// A user whose password is hashed here (bcrypt, `cost` rounds).
    public static func hashing(username: String, password: String, roles: [String] = [], cost: UInt8 = 10) -> GatewayUser {
        GatewayUser(username: username, passwordHash: Bcrypt.hash(password, cost: cost), roles: roles)
    }
}
