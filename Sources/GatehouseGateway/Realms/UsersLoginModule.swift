import GatehouseProtocol
import Foundation
public import GatehouseChecks
import GatehouseHTTP
import HummingbirdBcrypt
import Synchronization

/// A user of a ``UsersLoginModule``: a bcrypt hash of the password and the roles granted.
public struct GatewayUser: Sendable, Codable, Equatable {
    public var username: String
    public var passwordHash: String
    public var roles: [String]

    enum CodingKeys: String, CodingKey, CaseIterable { case username, passwordHash, roles }
    /// The keys a user may hold: any other is refused.
    static let yamlKeys: YAMLKeys = .mapping(CodingKeys.self)

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
/// Passwords go through the same `PasswordVerifier` as the server's `UserLogin`: failures counted per user name
/// (`AccountLockouts`: a locked account answers like a wrong password, even with the right one) and a decoy at the
/// users' own bcrypt cost for unknown names — and throttled by the client's address when given a `SourceThrottle`
/// (its wrong passwords, any names, lock the address for a while: `429` with `Retry-After`).
public struct UsersLoginModule: LoginModule, RememberingLoginModule {
    private let users: [String: GatewayUser]
    private let verified: VerifiedPasswordCache?
    private let passwords: PasswordVerifier

    public init(users: [GatewayUser], verifiedLifetime: Duration = .seconds(60),
                lockouts: any AccountLockouts = InMemoryAccountLockouts(policy: AccountLockoutPolicy()), sources: SourceThrottle? = nil) {
        self.users = Dictionary(users.map { ($0.username, $0) }, uniquingKeysWith: { first, _ in first })
        verified = verifiedLifetime > .zero ? VerifiedPasswordCache(lifetime: verifiedLifetime) : nil
        // No users: nothing to tell apart, the cheapest decoy.
        passwords = PasswordVerifier(lockouts: lockouts, decoyCost: PasswordVerifier.decoyCost(for: users.map(\.passwordHash), fallback: 4),
                                     sources: sources)
    }

    /// The decoy checked for unknown user names.
    var decoyHash: String { passwords.decoyHash }

    public func login(_ credentials: Credentials, scheme: ChallengeScheme) async -> LoginResult {
        guard let (username, password) = credentials.basic else {
            return credentials.isEmpty ? .failure("no credentials") : .ignore
        }
        let account = "user:\(username)"
        let now = EpochTime.nowMillis()
        do {
            // A locked address is refused even a password remembered as right (it would tell a guesser it was).
            try await passwords.refuseIfSourceLocked(now: now)
        } catch let refused as SourceThrottle.Throttled {
            return .throttled("too many failed passwords from this address", retryAfter: refused.retryAfter)
        } catch {}
        if let subject = verified?.subject(username: username, password: password) {
            if (try? await passwords.lockouts.isLocked(account, now: now)) != true { return .success(subject) }
            return .failure("wrong user name or password")
        }
        let user = users[username]
        let valid: Bool
        do {
            valid = try await passwords.verify(password, hash: user?.passwordHash, account: account, now: now)
        } catch is BcryptFlights.Busy {
            // A flood of password checks: refused at once, to be tried again shortly (never a wrong password).
            return .unavailable("too many password checks are waiting")
        } catch let refused as SourceThrottle.Throttled {
            return .throttled("too many failed passwords (or password checks at once) from this address", retryAfter: refused.retryAfter)
        } catch {
            valid = false
        }
        guard valid, let user else {
            // Counted against the client's address too, whatever the name (the server counts a round's wrong answers).
            try? await passwords.recordSourceFailure(now: now)
            // Only a user that exists can be locked: made-up names leave no trace here either (they grew this
            // memory without bound, 8 KB a name).
            if user != nil { UnsettledAccounts.shared.failed(account, in: passwords.lockouts) }
            return .failure("wrong user name or password")
        }
        UnsettledAccounts.shared.settled(account, in: passwords.lockouts)
        let subject = Subject(name: user.username, roles: Set(user.roles))
        verified?.remember(username: username, password: password, subject: subject)
        return .success(subject)
    }

    /// A remembered pair, answered on the event loop: only with the gateway's in-memory lockouts, and only for an
    /// account that has had no failed password since its last verified one (`UnsettledAccounts`) — such an
    /// account cannot be locked, so the lockout check of ``login(_:scheme:)`` would say the same. Anything else
    /// (a wrong or unknown pair, another lockout store) runs ``login(_:scheme:)``.
    public func cachedLogin(_ credentials: Credentials, scheme: ChallengeScheme) -> LoginResult? {
        rememberedLogin(credentials, scheme: scheme)?.result
    }

    /// ``cachedLogin(_:scheme:)``, and until when a success stays true as long as no account has a failed
    /// password meanwhile (``UnsettledAccounts/failures``): the end of the pair's `verifiedLifetime`. `nil` for
    /// other results, which depend on the credentials alone.
    func rememberedLogin(_ credentials: Credentials, scheme: ChallengeScheme) -> (result: LoginResult, until: ContinuousClock.Instant?)? {
        guard let (username, password) = credentials.basic else {
            return (credentials.isEmpty ? .failure("no credentials") : .ignore, nil)
        }
        guard let verified, passwords.lockouts is InMemoryAccountLockouts,
              !UnsettledAccounts.shared.isUnsettled("user:\(username)", in: passwords.lockouts),
              // A locked address is refused even a remembered pair: its task answers 429.
              passwords.isSourceKnownUnlocked(credentials.clientAddress, now: EpochTime.nowMillis()),
              let (subject, expires) = verified.entry(username: username, password: password)
        else { return nil }
        return (.success(subject), expires)
    }
}

extension GatewayUser {
    /// A user whose password is hashed here (bcrypt, `cost` rounds).
    public static func hashing(username: String, password: String, roles: [String] = [], cost: UInt8 = 10) -> GatewayUser {
        GatewayUser(username: username, passwordHash: Bcrypt.hash(password, cost: cost), roles: roles)
    }
}

/// The accounts that have had a failed password since their last verified one, per lockout store: the accounts
/// that may be locked. ``UsersLoginModule/cachedLogin(_:scheme:)`` answers only for the others. Past `capacity`
/// accounts it stops answering for anyone (every login then checks the lockout store).
final class UnsettledAccounts: Sendable {
    static let shared = UnsettledAccounts()
    private let capacity = 100_000
    private let state = Mutex<(accounts: Set<String>, overflowed: Bool)>(([], false))
    private let failureCount = Atomic<UInt64>(0)

    /// How many failed passwords there have been in this process, in any store: an admission remembered while
    /// it read the same number has seen no account become unsettled since (``RememberedAdmission``).
    var failures: UInt64 { failureCount.load(ordering: .acquiring) }

    private func key(_ account: String, _ store: any AccountLockouts) -> String {
        "\(ObjectIdentifier(store as AnyObject).hashValue):\(account)"
    }

    func failed(_ account: String, in store: any AccountLockouts) {
        let key = key(account, store)
        state.withLock { state in
            // Full: every account counts as unsettled from now on (logins verify as without the memory), and the
            // set grows no more.
            if state.accounts.count >= capacity {
                state.overflowed = true
            } else {
                state.accounts.insert(key)
            }
        }
        failureCount.add(1, ordering: .releasing)
    }

    func settled(_ account: String, in store: any AccountLockouts) {
        let key = key(account, store)
        _ = state.withLock { $0.accounts.remove(key) }
    }

    /// How many accounts kept name `fragment` (for tests: what stays in memory).
    func count(naming fragment: String) -> Int { state.withLock { $0.accounts.filter { $0.contains(fragment) }.count } }

    func isUnsettled(_ account: @autoclosure () -> String, in store: any AccountLockouts) -> Bool {
        // The common case, nobody has failed: no key to build.
        if state.withLock({ $0.accounts.isEmpty && !$0.overflowed }) { return false }
        let key = key(account(), store)
        return state.withLock { $0.overflowed || $0.accounts.contains(key) }
    }
}
