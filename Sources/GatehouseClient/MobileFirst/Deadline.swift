import GatehouseProtocol

/// Runs an operation that may never finish (a user who never answers) with a time limit, without waiting
/// for it: the caller resumes at the limit, the operation's task is cancelled.
enum Deadline {
    enum Outcome<Value: Sendable>: Sendable {
        case value(Value)
        case timedOut
        /// The caller's task was cancelled.
        case cancelled
    }

    /// Delivers an outcome once; later deliveries are ignored. An outcome delivered before the run starts is
    /// kept for it.
    final class Resolver<Value: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Outcome<Value>, Never>?
            var outcome: Outcome<Value>?
            var tasks: [Task<Void, Never>] = []
        }
        private let state = Locked(State())

        /// Delivers `outcome` if nothing was delivered yet; `true` when it was delivered.
        @discardableResult
        func resolve(_ outcome: Outcome<Value>) -> Bool {
            let delivered = state.withLock { state -> (CheckedContinuation<Outcome<Value>, Never>?, [Task<Void, Never>])? in
                guard state.outcome == nil else { return nil }
                state.outcome = outcome
                defer { state.continuation = nil; state.tasks = [] }
                return (state.continuation, state.tasks)
            }
            guard let (continuation, tasks) = delivered else { return false }
            // The operation's task first: its cancellation handlers (a handler's open challenge closing) run now,
            // so that nothing of it is left open when the caller resumes.
            for task in tasks { task.cancel() }
            continuation?.resume(returning: outcome)
            return true
        }

        /// Whether an outcome was delivered.
        var isResolved: Bool { state.withLock { $0.outcome != nil } }

        /// Starts waiting; `false` (and `continuation` resumed) when an outcome is already there.
        fileprivate func start(_ continuation: CheckedContinuation<Outcome<Value>, Never>) -> Bool {
            let early = state.withLock { state -> Outcome<Value>? in
                if let outcome = state.outcome { return outcome }
                state.continuation = continuation
                return nil
            }
            if let early { continuation.resume(returning: early) }
            return early == nil
        }

        fileprivate func track(_ task: Task<Void, Never>) {
            let cancelNow = state.withLock { state in
                if state.outcome != nil { return true }
                state.tasks.append(task)
                return false
            }
            if cancelNow { task.cancel() }
        }
    }

    /// Runs `operation` until it returns, `timeout` passes, someone calls `resolver.resolve`, or the calling
    /// task is cancelled — whichever comes first.
    static func run<Value: Sendable>(
        within timeout: Duration, resolver: Resolver<Value> = Resolver(),
        _ operation: @escaping @Sendable () async -> Value
    ) async -> Outcome<Value> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome<Value>, Never>) in
                guard resolver.start(continuation) else { return }
                resolver.track(Task { resolver.resolve(.value(await operation())) })
                resolver.track(Task {
                    do {
                        try await Task.sleep(for: timeout)
                        resolver.resolve(.timedOut)
                    } catch {}
                })
            }
        } onCancel: {
            resolver.resolve(.cancelled)
        }
    }
}
