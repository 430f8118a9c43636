import Synchronization

/// When failed logins lock an account (beyond MobileFirst, whose attempt counters are per client registration
/// and so reset by registering again): failures are counted per account across all clients and nodes.
///
/// `threshold` failures within `window` lock the account for `duration`; every further lockout lasts `growth`
/// times longer, up to `maxDuration`. Failures while locked are counted too, so an attack in progress keeps the
/// account locked. A locked account answers exactly like a wrong password (no user enumeration); a success
/// clears the account's record.
public struct AccountLockoutPolicy: Sendable, Equatable, Codable {
    /// Failures that lock the account; 0 disables lockout.
    public var threshold: Int
    /// The window failures are counted in, ms.
    public var window: Int64
    /// The first lockout's length, ms.
    public var duration: Int64
    /// How much longer each repeated lockout lasts.
    public var growth: Int
    /// The longest lockout, ms.
    public var maxDuration: Int64

    public init(threshold: Int = 10, window: Int64 = 900_000, duration: Int64 = 300_000, growth: Int = 2, maxDuration: Int64 = 86_400_000) {
        self.threshold = threshold
        self.window = window
        self.duration = duration
        self.growth = growth
        self.maxDuration = maxDuration
    }

    /// No lockout at all.
    public static let disabled = AccountLockoutPolicy(threshold: 0)

    /// The state after one more failure at `now`.
    public func failed(_ state: AccountFailureState?, now: Int64) -> AccountFailureState {
        var state = state ?? AccountFailureState(failures: 0, windowStart: now, lockedUntil: 0, lockouts: 0)
        guard threshold > 0 else { return state }
        if state.lockedUntil <= now, now - state.windowStart > window {
            state.failures = 0
            state.windowStart = now
        }
        state.failures += 1
        if state.failures >= threshold {
            var length = duration
            for _ in 0..<min(state.lockouts, 40) where length < maxDuration { length = length.multipliedReportingOverflow(by: Int64(max(growth, 1))).partialValue }
            state.lockedUntil = now + min(max(length, 0), maxDuration)
            state.lockouts += 1
            state.failures = 0
            state.windowStart = now
        }
        return state
    }
}

/// What is remembered of an account's failed logins.
public struct AccountFailureState: Sendable, Equatable, Codable {
    /// Failures counted since `windowStart` (or since the last lockout began).
    public var failures: Int
    /// Epoch ms.
    public var windowStart: Int64
    /// Epoch ms; the account is locked while this is in the future.
    public var lockedUntil: Int64
    /// Lockouts so far (each lasts longer).
    public var lockouts: Int

    public init(failures: Int, windowStart: Int64, lockedUntil: Int64, lockouts: Int) {
        self.failures = failures
        self.windowStart = windowStart
        self.lockedUntil = lockedUntil
        self.lockouts = lockouts
    }

    public func isLocked(at now: Int64) -> Bool { lockedUntil > now }
}

/// Where failed logins are counted: the store (`GatehouseStore`-backed, shared by every node), or memory for a
/// single process such as the gateway.
///
/// Accounts are namespaced strings: `user:<name>`, `source:<address>` (``SourceThrottle``), `realm/<realm>:<name>`.
public protocol AccountLockouts: Sendable {
    /// Whether `account` is locked at `now` (epoch ms).
    func isLocked(_ account: String, now: Int64) async throws -> Bool
    /// Counts a failure of `account` at `now`.
    func recordFailure(_ account: String, now: Int64) async throws
    /// A success: the account's failures are forgotten.
    func recordSuccess(_ account: String) async throws
    /// ``isLocked(_:now:)`` for a path that verified the secret before and asks again on every request: it may
    /// answer from a view of the locked accounts that follows other nodes' locks within a few seconds (this node's
    /// own at once). By default the same as ``isLocked(_:now:)``.
    func isLockedAsKnown(_ account: String, now: Int64) async throws -> Bool
    /// What ``isLockedAsKnown(_:now:)`` answers when it can answer from memory alone (no store read, no suspension,
    /// for a request answered on the event loop); `nil` when it cannot. By default `nil`.
    func isLockedFromMemory(_ account: String, now: Int64) -> Bool?
}

extension AccountLockouts {
    public func isLockedAsKnown(_ account: String, now: Int64) async throws -> Bool {
        if let locked = isLockedFromMemory(account, now: now) { return locked }
        return try await isLocked(account, now: now)
    }

    public func isLockedFromMemory(_ account: String, now: Int64) -> Bool? { nil }
}

/// Failed logins counted in this process's memory (the gateway; tests).
public final class InMemoryAccountLockouts: AccountLockouts {
    public let policy: AccountLockoutPolicy
    private let states = Mutex<[String: AccountFailureState]>([:])
    /// The most accounts remembered; the oldest unlocked ones are forgotten first.
    private let capacity: Int

    public init(policy: AccountLockoutPolicy, capacity: Int = 100_000) {
        self.policy = policy
        self.capacity = capacity
    }

    public func isLocked(_ account: String, now: Int64) async throws -> Bool {
        states.withLock { $0[account]?.isLocked(at: now) ?? false }
    }

    public func isLockedFromMemory(_ account: String, now: Int64) -> Bool? {
        states.withLock { $0[account]?.isLocked(at: now) ?? false }
    }

    public func recordFailure(_ account: String, now: Int64) async throws {
        guard policy.threshold > 0 else { return }
        states.withLock { states in
            if states[account] == nil, states.count >= capacity {
                states = states.filter { $0.value.isLocked(at: now) || now - $0.value.windowStart <= policy.window }
                if states.count >= capacity { return }
            }
            states[account] = policy.failed(states[account], now: now)
        }
    }

    public func recordSuccess(_ account: String) async throws {
        _ = states.withLock { $0.removeValue(forKey: account) }
    }
}

/// How a configuration file writes an ``AccountLockoutPolicy`` (the server's policy and the gateway's
/// configuration alike): every key optional, times in seconds.
///
/// ```yaml
/// accountLockout: { threshold: 10, windowSec: 900, durationSec: 300, growth: 2, maxDurationSec: 86400 }
/// ```
public struct AccountLockoutSettings: Codable, Sendable {
    /// Failures that lock an account (10); 0 disables lockout.
    public var threshold: Int?
    /// Seconds in which failures are counted (900).
    public var windowSec: Int?
    /// Seconds of the first lockout (300).
    public var durationSec: Int?
    /// Each repeated lockout lasts this many times longer (2).
    public var growth: Int?
    /// The longest lockout, seconds (86400).
    public var maxDurationSec: Int?

    /// The settings' keys (a configuration file's keys are checked against them).
    public enum CodingKeys: String, CodingKey, CaseIterable { case threshold, windowSec, durationSec, growth, maxDurationSec }

    public init(threshold: Int? = nil, windowSec: Int? = nil, durationSec: Int? = nil, growth: Int? = nil, maxDurationSec: Int? = nil) {
        self.threshold = threshold
        self.windowSec = windowSec
        self.durationSec = durationSec
        self.growth = growth
        self.maxDurationSec = maxDurationSec
    }

    /// A setting out of its range: the key (under `accountLockout`) and the problem.
    public struct Invalid: Error, Sendable {
        public let key: String
        public let problem: String
    }

    /// The policy these settings describe, checked; what they leave out is taken from `defaults`.
    public func policy(defaults: AccountLockoutPolicy = AccountLockoutPolicy()) throws(Invalid) -> AccountLockoutPolicy {
        var lockout = defaults
        func seconds(_ value: Int?, _ name: String, default fallback: Int64) throws(Invalid) -> Int64 {
            guard let value else { return fallback }
            guard (1...31_536_000).contains(value) else { throw Invalid(key: name, problem: "must be between 1 and 31536000") }
            return Int64(value) * 1000
        }
        if let threshold {
            guard (0...1000).contains(threshold) else { throw Invalid(key: "threshold", problem: "must be between 0 and 1000") }
            lockout.threshold = threshold
        }
        lockout.window = try seconds(windowSec, "windowSec", default: lockout.window)
        lockout.duration = try seconds(durationSec, "durationSec", default: lockout.duration)
        lockout.maxDuration = try seconds(maxDurationSec, "maxDurationSec", default: max(lockout.maxDuration, lockout.duration))
        if let growth {
            guard (1...100).contains(growth) else { throw Invalid(key: "growth", problem: "must be between 1 and 100") }
            lockout.growth = growth
        }
        guard lockout.maxDuration >= lockout.duration else { throw Invalid(key: "maxDurationSec", problem: "must not be shorter than durationSec") }
        return lockout
    }
}
