import GatehouseProtocol
import Foundation
import GatehouseChecks
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
///
/// Passwords go through the same ``PasswordVerifier`` as the server's `UserLogin`: failures counted per user name
/// (``AccountLockouts``: a locked account answers like a wrong password, even with the right one) and a decoy at the
/// users' own bcrypt cost for unknown names.
public struct UsersLoginModule: LoginModule {
    private let users: [String: GatewayUser]
    private let verified: VerifiedPasswordCache?
    private let passwords: PasswordVerifier

    public init(users: [GatewayUser], verifiedLifetime: Duration = .seconds(60),
                lockouts: any AccountLockouts = InMemoryAccountLockouts(policy: AccountLockoutPolicy())) {
        self.users = Dictionary(users.map { ($0.username, $0) }, uniquingKeysWith: { first, _ in first })
        verified = verifiedLifetime > .zero ? VerifiedPasswordCache(lifetime: verifiedLifetime) : nil
        // No users: nothing to tell apart, the cheapest decoy.
        passwords = PasswordVerifier(lockouts: lockouts, decoyCost: PasswordVerifier.decoyCost(for: users.map(\.passwordHash), fallback: 4))
    }

    /// The decoy checked for unknown user names.
    var decoyHash: String { passwords.decoyHash }

    public func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult {
        guard let (username, password) = credentials.basic else {
            return credentials.isEmpty ? .failure("no credentials") : .ignore
        }
        let account = "user:\(username)"
        let now = EpochTime.nowMillis()
        if let subject = verified?.subject(username: username, password: password) {
            if (try? await passwords.lockouts.isLocked(account, now: now)) != true { return .success(subject) }
            return .failure("wrong user name or password")
        }
        let user = users[username]
        let valid = (try? await passwords.verify(password, hash: user?.passwordHash, account: account, now: now)) ?? false
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
