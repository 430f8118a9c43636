import GatehouseProtocol

/// The client's challenge handlers by security-check name, its gateway handlers, and what happened to
/// their challenges: which are open now, and which were abandoned (cancelled or timed out) and when.
final class ChallengeHandlerRegistry: Sendable {
    /// A challenge put to a responder and not answered yet.
    struct OpenChallenge: Sendable {
        let resolver: Deadline.Resolver<ChallengeAnswer>
    }

    private struct State {
        var responders: [String: any SecurityCheckChallengeResponder] = [:]
        var gateways: [LoginPageChallengeHandler] = []
        /// The sequence number current when each check's challenge was last abandoned, and why.
        var abandoned: [String: (sequence: UInt64, error: GatehouseClientError)] = [:]
        var open: [String: OpenChallenge] = [:]
        /// `login` calls that answered an open challenge and wait for the check's outcome.
        var outcomeWaiters: [String: [UInt64: CheckedContinuation<Result<JSONObject, GatehouseClientError>?, Never>]] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Locked(State())
    private let sequence = Locked<UInt64>(0)

    // MARK: Request sequence

    /// A new sequence number: every request and flow takes one when it starts, so that a cancelled challenge
    /// can fail exactly the requests that were in flight when it was cancelled.
    func nextSequence() -> UInt64 { sequence.withLock { sequence in sequence += 1; return sequence } }

    // MARK: Handlers

    func register(_ responder: any SecurityCheckChallengeResponder) throws(GatehouseClientError) {
        let added = state.withLock { state -> Bool in
            guard state.responders[responder.securityCheck] == nil else { return false }
            state.responders[responder.securityCheck] = responder
            return true
        }
        guard added else { throw .duplicateChallengeHandler(securityCheck: responder.securityCheck) }
    }

    func unregister(securityCheck: String) {
        state.withLock { _ = $0.responders.removeValue(forKey: securityCheck) }
    }

    func responder(for securityCheck: String) -> (any SecurityCheckChallengeResponder)? {
        state.withLock { $0.responders[securityCheck] }
    }

    func register(_ gateway: LoginPageChallengeHandler) {
        state.withLock { $0.gateways.append(gateway) }
    }

    /// The first gateway handler that recognises `response`.
    func gateway(for response: ResourceResponse) -> LoginPageChallengeHandler? {
        state.withLock { $0.gateways }.first { $0.canHandleResponse(response) }
    }

    // MARK: Abandoned challenges

    /// Records that the challenge of `securityCheck` was abandoned with `error`.
    func abandon(_ securityCheck: String, with error: GatehouseClientError) {
        let now = sequence.withLock { $0 }
        state.withLock { $0.abandoned[securityCheck] = (now, error) }
    }

    /// The error of the abandonment of `securityCheck`, if it happened after the request numbered `origin` started.
    func abandonment(of securityCheck: String, since origin: UInt64) -> GatehouseClientError? {
        state.withLock { state in
            guard let record = state.abandoned[securityCheck], record.sequence >= origin else { return nil }
            return record.error
        }
    }

    // MARK: Open challenges

    func open(_ securityCheck: String, _ challenge: OpenChallenge) {
        state.withLock { $0.open[securityCheck] = challenge }
    }

    func close(_ securityCheck: String) {
        state.withLock { _ = $0.open.removeValue(forKey: securityCheck) }
    }

    /// Answers the open challenge of `securityCheck` with `credentials` and waits for the check's outcome in the
    /// conversation that asked it; `nil` when no challenge of that check is open. A cancelled caller leaves at once
    /// with `cancelled` (the conversation goes on for the requests that wait for it).
    func answerOpenChallenge(_ securityCheck: String, with credentials: JSONObject) async -> Result<JSONObject, GatehouseClientError>? {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<JSONObject, GatehouseClientError>?, Never>) in
                // Cancellation is checked under the lock the cancellation handler takes: a caller cancelled before its
                // waiter is registered is never registered (else it would wait for the whole conversation).
                let (open, cancelled) = state.withLock { state -> (OpenChallenge?, Bool) in
                    if Task.isCancelled { return (nil, true) }
                    guard let open = state.open[securityCheck], !open.resolver.isResolved else { return (nil, false) }
                    state.outcomeWaiters[securityCheck, default: [:]][id] = continuation
                    return (open, false)
                }
                if cancelled {
                    continuation.resume(returning: .failure(.cancelled(underlying: CancellationError())))
                    return
                }
                guard let open else {
                    continuation.resume(returning: nil)
                    return
                }
                // If the handler answered meanwhile, the waiter still gets the check's outcome.
                open.resolver.resolve(.value(.answer(credentials)))
            }
        } onCancel: {
            let waiter = state.withLock { $0.outcomeWaiters[securityCheck]?.removeValue(forKey: id) }
            waiter?.resume(returning: .failure(.cancelled(underlying: CancellationError())))
        }
    }

    /// Delivers the outcome of `securityCheck` to the `login` calls waiting for it.
    func settle(_ securityCheck: String, _ outcome: Result<JSONObject, GatehouseClientError>) {
        let waiters = state.withLock { $0.outcomeWaiters.removeValue(forKey: securityCheck) } ?? [:]
        for waiter in waiters.values { waiter.resume(returning: outcome) }
    }
}
