import HummingbirdBcrypt
public import NIOPosix
import Synchronization

/// bcrypt verifications in flight, by password and hash: identical ones asked at the same time (a client's burst
/// of requests that all carry the same `Basic` credentials before the first is verified) run once, and all wait
/// for that one. The answer is a pure function of the pair, so sharing it changes no outcome; each caller still
/// counts its own success or failure against the account (``PasswordVerifier``).
///
/// Without this, 32 connections opening at once with one user's credentials cost 32 bcrypt runs (seconds of CPU at
/// cost 10). A waiter that joins late returns sooner than a whole run would take; that tells it only that another
/// request is checking the very same password against the same hash, and the answer it gets, which it is about to
/// learn anyway.
///
/// The runs waiting or running are bounded (``maximumQueued``): past the bound a new verification is refused at once
/// with ``Busy`` (the server answers `503` with `Retry-After`) instead of joining a queue that a flood of
/// unauthenticated requests made minutes long for everyone.
public final class BcryptFlights: Sendable {
    /// Too many verifications are waiting: none is started for this request.
    public struct Busy: Error, CustomStringConvertible {
        public var description: String { "too many password checks are waiting" }
    }

    private let flights = Mutex<[String: Task<Bool, any Error>]>([:])
    private let runs = Atomic<Int>(0)
    private let queued = Atomic<Int>(0)
    private let threads: NIOThreadPool
    /// Runs waiting or running at most.
    public let maximumQueued: Int

    /// - Parameters:
    ///   - threads: where bcrypt runs (never Swift concurrency's few threads).
    ///   - maximumQueued: runs waiting or running at most; a verification past it throws ``Busy``.
    public init(threads: NIOThreadPool, maximumQueued: Int = 64) {
        self.threads = threads
        self.maximumQueued = maximumQueued
    }

    /// Whether `password` matches the bcrypt `hash`; throws ``Busy`` when ``maximumQueued`` runs are waiting. Only the
    /// verifications of one `account` are shared: unknown names all check the one decoy hash, and sharing across
    /// names made two unknown names with one password answer faster than a known name raced against one (a timing
    /// that told which names exist).
    public func verify(_ password: String, hash: String, account: String = "") async throws -> Bool {
        let key = Self.key(password, hash: hash, account: account)
        let threads = self.threads
        let flight = try flights.withLock { flights throws(Busy) in
            if let running = flights[key] { return running }
            guard self.queued.load(ordering: .relaxed) < maximumQueued else { throw Busy() }
            self.queued.add(1, ordering: .relaxed)
            let started = Task { () throws -> Bool in
                defer { self.queued.subtract(1, ordering: .relaxed) }
                runs.add(1, ordering: .relaxed)
                return try await threads.runIfActive { Bcrypt.verify(password, hash: hash) }
            }
            flights[key] = started
            return started
        }
        defer {
            flights.withLock { flights in
                if flights[key] == flight { flights[key] = nil }
            }
        }
        return try await flight.value
    }

    /// The verification of this very pair (and account) running now, if any: joining it costs no bcrypt run.
    func running(_ password: String, hash: String, account: String = "") -> Task<Bool, any Error>? {
        flights.withLock { $0[Self.key(password, hash: hash, account: account)] }
    }

    private static func key(_ password: String, hash: String, account: String) -> String {
        account + "\u{0}" + hash + "\u{0}" + password
    }

    /// How many bcrypt runs were started (for tests).
    var runCount: Int { runs.load(ordering: .relaxed) }
}
