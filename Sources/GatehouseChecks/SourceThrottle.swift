public import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the request being served comes from, for the password checks it causes: the server sets it around each
/// request (``RequestSource/$address``), ``PasswordVerifier`` reads it. A task-local, so a security check — the
/// built-in ones and those users write — needs no parameter for it.
public enum RequestSource {
    /// The client's address (the peer's, or the one a trusted proxy names), or `nil` outside a request.
    @TaskLocal public static var address: String?

    /// The key a source is throttled under: an IPv4 address as it is, an IPv6 address by its /64 (one subscriber's
    /// network: a single host has 2⁶⁴ addresses to rotate through), anything else as it is, cut to 64 bytes.
    public static func key(of address: String) -> String {
        var bytes = in6_addr()
        guard address.contains(":"), inet_pton(AF_INET6, address, &bytes) == 1 else { return String(decoding: address.utf8.prefix(64), as: UTF8.self) }
        if isIPv4Mapped(bytes) {
            return withUnsafeBytes(of: bytes) { raw in raw[12...].map(String.init).joined(separator: ".") }
        }
        let groups = withUnsafeBytes(of: bytes) { raw in
            (0..<4).map { String(UInt16(raw[2 * $0]) << 8 | UInt16(raw[2 * $0 + 1]), radix: 16) }
        }
        return groups.joined(separator: ":") + "::/64"
    }

    private static func isIPv4Mapped(_ address: in6_addr) -> Bool {
        withUnsafeBytes(of: address) { raw in raw[0..<10].allSatisfy { $0 == 0 } && raw[10] == 0xff && raw[11] == 0xff }
    }
}

/// Password checks per source address — one machine's flood must cost the server a bounded amount whatever names
/// and secrets it tries, and must not slow down everyone else's logins:
///
/// - at most ``SourceLanes/running`` checks of one source run at a time and ``SourceLanes/waiting`` wait; past that a
///   check is refused at once (``Throttled``, `429` with `Retry-After: 1`), so one address holds a fixed share of the
///   hashing threads;
/// - its failures (wrong secrets of any name, known or not; wrong answers to any security check — a PIN, a captcha, a
///   password — counted once per check per round by the server) are counted in the store under `source:<address>`,
///   like an account's (``AccountLockoutPolicy``): past the threshold every password check and every answer from it is
///   refused for a while, on every node sharing the store, without a bcrypt run. Registering again, from any device,
///   buys no fresh attempts.
///
/// Unlike an account's lockout, a source's refusal says so (`429` with `Retry-After`): it tells nothing about any
/// account, and a client behind the same address learns why it waits. A success forgives nothing: behind one NAT, a
/// colleague's login must not reset an attacker's count.
public struct SourceThrottle: Sendable {
    /// A password check refused for its source.
    public struct Throttled: Error, CustomStringConvertible {
        /// Seconds after which trying again makes sense.
        public let retryAfter: Int
        public var description: String { "too many password checks from this address" }
    }

    /// A source's failures lock it when 100 come within 5 minutes: for a minute, then twice as long each time, up to
    /// an hour. Generous for an office behind one NAT address (a hundred mistyped passwords in five minutes), a wall
    /// for a guesser: about 1,200 guesses a day from one address instead of hundreds a second.
    public static let defaultPolicy = AccountLockoutPolicy(threshold: 100, window: 300_000, duration: 60_000, growth: 2, maxDuration: 3_600_000)

    /// The node's lanes (kept across policy changes).
    public let lanes: SourceLanes
    /// Failures counted per `source:<address>` account.
    public let failures: any AccountLockouts
    /// What a locked source is told to wait, seconds: the first lock's length.
    public let lockedRetryAfter: Int

    /// A throttle counting failures by `policy` in what `counting` makes of it (the store's ``AccountLockouts`` on a
    /// server, memory on the gateway); `nil` when the policy turns it off (`threshold: 0`).
    public init?(policy: AccountLockoutPolicy, lanes: SourceLanes, counting: (AccountLockoutPolicy) -> any AccountLockouts) {
        guard policy.threshold > 0 else { return nil }
        self.lanes = lanes
        failures = counting(policy)
        lockedRetryAfter = Int(max(policy.duration / 1000, 1))
    }

    /// The account a source's failures are counted under.
    public static func account(of source: String) -> String { "source:" + RequestSource.key(of: source) }

    /// Throws ``Throttled`` when `source` is locked now (this node's view of the store, or the store).
    public func refuseIfLocked(_ source: String, now: Int64) async throws {
        if try await failures.isLockedAsKnown(Self.account(of: source), now: now) { throw Throttled(retryAfter: lockedRetryAfter) }
    }

    /// ``refuseIfLocked(_:now:)`` from memory alone: `true` when the source is known not to be locked now, `false`
    /// when it is locked or the view cannot tell (then the caller takes the path that may read the store).
    public func isKnownUnlocked(_ source: String, now: Int64) -> Bool {
        failures.isLockedFromMemory(Self.account(of: source), now: now) == false
    }

    /// Counts a failure of `source` (a wrong answer to a security check: ``SourceThrottle`` counts rounds' wrong
    /// answers, whatever the check, where the round is judged).
    public func recordFailure(_ source: String, now: Int64) async throws {
        try await failures.recordFailure(Self.account(of: source), now: now)
    }

    /// Runs `check` (one password verification) in `source`'s lane, after ``refuseIfLocked(_:now:)``; a `false` result
    /// counts a failure of the source when `countsFailure` (a machine's secret; a user's password in a security check is
    /// counted as the round's wrong answer instead, once).
    public func run(from source: String, now: Int64, countsFailure: Bool = true, _ check: () async throws -> Bool) async throws -> Bool {
        try await refuseIfLocked(source, now: now)
        let key = RequestSource.key(of: source)
        guard await lanes.enter(key) else { throw Throttled(retryAfter: 1) }
        let matches: Bool
        do {
            matches = try await check()
        } catch {
            lanes.leave(key)
            throw error
        }
        lanes.leave(key)
        if !matches, countsFailure { try await recordFailure(source, now: now) }
        return matches
    }
}

/// The password checks each source address has running and waiting on this node (``SourceThrottle``): a few run at
/// once, a bounded number wait their turn in order, the rest are refused. Sources with nothing running are forgotten,
/// so the table holds only the addresses being served.
public final class SourceLanes: Sendable {
    private struct Lane {
        var running = 0
        var waiting: [CheckedContinuation<Bool, Never>] = []
    }

    /// Checks of one source running at once.
    public let running: Int
    /// Checks of one source waiting their turn at most.
    public let waiting: Int
    private let lanes = Mutex<[String: Lane]>([:])

    /// - Parameters:
    ///   - running: one per four cores (one on two): a single address never holds more than a quarter of the hashing
    ///     threads, so everyone else's logins keep their pace (measured: SECURITY.md).
    ///   - waiting: about two seconds of one source's checks at cost 10 on one thread.
    public init(running: Int = max(System.coreCount / 4, 1), waiting: Int = 32) {
        self.running = max(running, 1)
        self.waiting = max(waiting, 0)
    }

    /// Takes a place in `key`'s lane, waiting for it when the lane is busy; `false` (at once) when too many wait.
    /// A waiter is woken by a leaving check, which hands its place over (the running count stays).
    func enter(_ key: String) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer = lanes.withLock { lanes -> Bool? in
                var lane = lanes[key] ?? Lane()
                if lane.running < running {
                    lane.running += 1
                    lanes[key] = lane
                    return true
                }
                guard lane.waiting.count < waiting else { return false }
                lane.waiting.append(continuation)
                lanes[key] = lane
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Gives up a place in `key`'s lane: to the first waiter, or back.
    func leave(_ key: String) {
        let next = lanes.withLock { lanes -> CheckedContinuation<Bool, Never>? in
            guard var lane = lanes[key] else { return nil }
            if !lane.waiting.isEmpty {
                let first = lane.waiting.removeFirst()
                lanes[key] = lane
                return first
            }
            lane.running -= 1
            lanes[key] = lane.running > 0 ? lane : nil
            return nil
        }
        next?.resume(returning: true)
    }

}
