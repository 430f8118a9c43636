import Synchronization

/// The store cannot answer now — its database is unreachable, restarting, frozen, out of disk or locked — as opposed
/// to a request it refuses (``StoreError``) or a bug. Servers answer it `503` with `Retry-After`: the same request
/// may succeed in a moment.
public struct StoreUnavailable: Error, Sendable, CustomStringConvertible {
    /// What kind of outage.
    public enum Kind: String, Sendable {
        /// The database cannot be reached or is restarting.
        case unreachable
        /// The call did not finish within the store's deadline.
        case timedOut
        /// The database's disk is full: reads may still work.
        case full
        /// Another writer holds the database, or it is read-only.
        case busy
    }

    public let kind: Kind
    /// The underlying error's message, for the log (never for the client): no secrets, no query parameters.
    public let reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { "store unavailable (\(kind.rawValue)): \(reason)" }
}

extension GatehouseStore {
    /// By default only ``StoreUnavailable`` is an outage.
    public func outage(_ error: any Error) -> StoreUnavailable? {
        error as? StoreUnavailable
    }
}

/// Where a server's request runs when it has a thread of its own (the connection's event loop): store calls made for
/// the request start their work there and set their deadline's timer there, instead of on Swift concurrency's shared
/// threads and Dispatch's timer thread — two thread wake-ups fewer a call, most of what a store call cost beyond its
/// query (the `perf` profile of issue 39).
package protocol StoreCallExecutor: TaskExecutor {
    /// Runs `body` on this executor's thread after `delay`, unless the returned cancel is called first.
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> @Sendable () -> Void
}

/// The ``StoreCallExecutor`` of the request running, if it has one.
package enum StoreCalls {
    @TaskLocal package static var executor: (any StoreCallExecutor)?
}

/// Runs `operation` until it finishes or `limit` passes, whichever is first: then ``StoreUnavailable/Kind/timedOut``
/// is thrown at once and the operation is cancelled, even if it does not heed cancellation (a query to a frozen
/// database), so no caller waits longer than the deadline. The operation and the timer run on the request's own
/// thread when it has one (``StoreCalls/executor``).
public func withStoreDeadline<T: Sendable>(
    _ limit: Duration, _ what: @autoclosure () -> String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    let description = what()
    let executor = StoreCalls.executor
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            race.waiting.withLock { $0 = continuation }
            let expire: @Sendable () -> Void = {
                guard let waiting = race.take() else { return }
                race.work.withLock { $0 }?.cancel()   // a pool's lease waiting for a connection gives up
                waiting.resume(throwing: StoreUnavailable(.timedOut, "\(description) took longer than \(limit)"))
            }
            let cancelTimer: @Sendable () -> Void
            if let executor {
                cancelTimer = executor.schedule(after: limit, expire)
            } else {
                let timer = Task {
                    try? await Task.sleep(for: limit)
                    if !Task.isCancelled { expire() }
                }
                cancelTimer = { timer.cancel() }
            }
            let work = Task(executorPreference: executor) {
                let result: Result<T, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                cancelTimer()
                race.take()?.resume(with: result)
            }
            race.work.withLock { $0 = work }
        }
    } onCancel: {
        race.take()?.resume(throwing: CancellationError())
    }
}

/// The caller waiting in ``withStoreDeadline(_:_:_:)``, resumed once by whichever finishes first.
private final class DeadlineRace<T: Sendable>: Sendable {
    let waiting = Mutex<CheckedContinuation<T, any Error>?>(nil)
    let work = Mutex<Task<Void, Never>?>(nil)

    func take() -> CheckedContinuation<T, any Error>? { waiting.withLock { $0.take() } }
}
