import GatehouseProtocol

/// A challenge handler as in the MobileFirst tutorials: subclass it, override
/// ``handleChallenge(_:)`` to ask the user, and call ``submitChallengeAnswer(_:)-(JSONObject?)`` or ``cancel()``
/// when the user has answered.
///
/// ```swift
/// final class PinCodeChallengeHandler: SecurityCheckChallengeHandler, @unchecked Sendable {
///     override func handleChallenge(_ challenge: JSONObject) {
///         showPopup(remainingAttempts: challenge["remainingAttempts"]?.intValue ?? 0)  // ... later:
///         submitChallengeAnswer(["pin": "1234"])
///     }
///     override func challengeAbandoned(_ reason: GatehouseClientError) { dismissPopup() }
/// }
/// try client.registerChallengeHandler(PinCodeChallengeHandler(securityCheck: "PinCodeAttempts"))
/// ```
///
/// Subclasses restate `@unchecked Sendable` (Swift requires it of subclasses of an unchecked-`Sendable` class) and
/// must keep their own mutable state safe; ``SecurityCheckChallengeResponder`` is the checked alternative, and
/// ``MainActorChallengeHandler`` delivers every hook on the main actor for UI code. Register each handler once.
/// `handleChallenge` is called again after a wrong answer. A challenge left unanswered fails its requests after
/// the client's ``ClientConfiguration/challengeTimeout`` and ``challengeAbandoned(_:)`` is called. The hooks run on
/// an arbitrary task: hop to the main actor to touch UI (or use ``MainActorChallengeHandler``).
open class SecurityCheckChallengeHandler: SecurityCheckChallengeResponder, @unchecked Sendable {
    /// The security check this handler answers.
    public let securityCheck: String
    private let pending = PendingAnswer<ChallengeAnswer>()
    private let observer = Locked<ClientObserver?>(nil)

    /// A handler for the security check named `securityCheck`.
    public init(securityCheck: String) {
        self.securityCheck = securityCheck
    }

    /// Called by the framework with the check's challenge (`{}` when the check sent `null`). Ask the user, then
    /// call ``submitChallengeAnswer(_:)-(JSONObject?)`` or ``cancel()``, now or later.
    open func handleChallenge(_ challenge: JSONObject) {}

    /// Called by the framework when the check succeeded.
    open func handleSuccess(_ success: JSONObject) {}

    /// Called by the framework when the check failed (for instance `{"failure":"Account blocked"}`); the request
    /// fails with ``GatehouseClientError/securityCheckFailed(failures:)``.
    open func handleFailure(_ failure: JSONObject) {}

    /// Called by the framework when the open challenge was abandoned without an answer: `reason` is
    /// `challengeTimedOut` or `cancelled` (every request that
    /// waited for it was cancelled). Take the prompt down: a later ``submitChallengeAnswer(_:)-(JSONObject?)`` would
    /// come too late.
    open func challengeAbandoned(_ reason: GatehouseClientError) {}

    /// Sends `answer` to the security check (`nil` sends `null`).
    ///
    /// - Returns: `false` when no challenge is open (it was abandoned, or already answered): the answer is not
    ///   sent, and the client reports a ``GatehouseEvent/Kind/lateAnswer`` event and a warning in its log.
    @discardableResult
    public final func submitChallengeAnswer(_ answer: JSONObject?) -> Bool {
        deliver(answer.map(ChallengeAnswer.answer) ?? .empty)
    }

    /// Sends string credentials (`["pin": "1234"]`, `["username": user, "password": password]`).
    @discardableResult
    public final func submitChallengeAnswer(_ answer: [String: String]) -> Bool {
        submitChallengeAnswer(answer.mapValues(JSON.string))
    }

    /// Sends integer credentials (`["answer": 7]`).
    @discardableResult
    public final func submitChallengeAnswer(_ answer: [String: Int]) -> Bool {
        submitChallengeAnswer(answer.mapValues { JSON.int(Int64($0)) })
    }

    /// Sends boolean fields (`["rememberMe": true]`).
    @discardableResult
    public final func submitChallengeAnswer(_ answer: [String: Bool]) -> Bool {
        submitChallengeAnswer(answer.mapValues(JSON.bool))
    }

    /// Sends number fields.
    @discardableResult
    public final func submitChallengeAnswer(_ answer: [String: Double]) -> Bool {
        submitChallengeAnswer(answer.mapValues(JSON.double))
    }

    /// Abandons the open challenge: the request fails with ``GatehouseClientError/challengeCancelled(securityCheck:)``,
    /// and so do the requests that were waiting for this handler.
    ///
    /// - Returns: `false` when no challenge is open.
    @discardableResult
    public final func cancel() -> Bool {
        deliver(.cancel)
    }

    /// Whether a challenge is waiting for ``submitChallengeAnswer(_:)-(JSONObject?)`` or ``cancel()``.
    public final var isChallengeOpen: Bool { pending.isOpen }

    private func deliver(_ answer: ChallengeAnswer) -> Bool {
        if pending.resume(answer) { return true }
        observer.withLock { $0 }?.report(GatehouseEvent(.lateAnswer, securityCheck: securityCheck))
        return false
    }

    // MARK: SecurityCheckChallengeResponder

    /// The framework's side: calls ``handleChallenge(_:)`` and waits for ``submitChallengeAnswer(_:)-(JSONObject?)``
    /// or ``cancel()``. When the framework abandons the challenge (timeout), the open challenge is closed.
    public final func respond(to challenge: JSONObject) async -> ChallengeAnswer {
        await pending.wait(cancelled: .cancel) { handleChallenge(challenge) }
    }

    /// Where late answers are reported: the client this handler is registered with.
    func attach(_ observer: ClientObserver) {
        self.observer.withLock { $0 = observer }
    }
}
