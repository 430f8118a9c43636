import GatehouseProtocol

/// One piece of work that several callers wait for (a registration, a token flow), run once in its own task.
///
/// Each waiter leaves as soon as its own task is cancelled, with `cancelled`, without
/// disturbing the others; when the last waiter leaves before the work is done, the work's task is cancelled (its
/// HTTP requests end, its open challenge is abandoned) and the flow is no longer ``isJoinable``: a later caller
/// starts a new one.
final class SharedFlow<Value: Sendable>: Sendable {
    typealias Outcome = Result<Value, GatehouseClientError>

    private struct State {
        /// Everyone who joined and has not left, with their continuation once they wait.
        var waiters: [UInt64: CheckedContinuation<Outcome, Never>?] = [:]
        var nextWaiter: UInt64 = 0
        var outcome: Outcome?
        var abandoned = false
        var task: Task<Void, Never>?
    }

    private let state = Locked(State())

    /// Starts `operation` in a task of its own.
    init(_ operation: @escaping @Sendable () async -> Outcome) {
        let task = Task { self.finish(await operation()) }
        state.withLock { $0.task = task }
    }

    /// Whether the flow has delivered its outcome.
    var isFinished: Bool { state.withLock { $0.outcome != nil } }

    /// Joins the flow; `nil` when it cannot be joined any more (finished, or abandoned by all its waiters): the
    /// caller then starts a new one. Pass the ticket to ``value(_:)``.
    func join() -> UInt64? {
        state.withLock { state -> UInt64? in
            guard state.outcome == nil, !state.abandoned else { return nil }
            state.nextWaiter += 1
            state.waiters[state.nextWaiter] = .some(nil)
            return state.nextWaiter
        }
    }

    /// Waits for the outcome with the ticket of ``join()``; `cancelled` at once when the
    /// calling task is cancelled.
    func value(_ ticket: UInt64) async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let immediate = state.withLock { state -> Outcome? in
                    if let outcome = state.outcome { return outcome }
                    guard state.waiters[ticket] != nil, !Task.isCancelled else { return .failure(.cancelled(underlying: CancellationError())) }
                    state.waiters[ticket] = continuation
                    return nil
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                    leave(ticket)
                }
            }
        } onCancel: {
            leave(ticket)
        }
    }

    /// Cancels the flow's task, whoever waits for it.
    func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.abandoned = true
            return state.task
        }
        task?.cancel()
    }

    /// The waiter of `ticket` leaves (with `cancelled` if it was waiting); the last one to leave a running flow
    /// cancels its task.
    private func leave(_ ticket: UInt64) {
        let (continuation, task) = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, Task<Void, Never>?) in
            guard let entry = state.waiters.removeValue(forKey: ticket) else { return (nil, nil) }
            guard state.waiters.isEmpty, state.outcome == nil else { return (entry, nil) }
            state.abandoned = true
            return (entry, state.task)
        }
        continuation?.resume(returning: .failure(.cancelled(underlying: CancellationError())))
        task?.cancel()
    }

    private func finish(_ outcome: Outcome) {
        let waiters = state.withLock { state -> [CheckedContinuation<Outcome, Never>] in
            state.outcome = outcome
            state.task = nil
            defer { state.waiters = [:] }
            return state.waiters.values.compactMap { $0 }
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }
}
