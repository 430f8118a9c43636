import GatehouseProtocol

/// A challenge handler as in the MobileFirst tutorials (seeds 002, 003): subclass it, override
/// ``handleChallenge(_:)`` to ask the user, and call ``submitChallengeAnswer(_:)`` or ``cancel()`` when the user
/// has answered.
///
/// ```swift
/// final class PinCodeChallengeHandler: SecurityCheckChallengeHandler, @unchecked Sendable {
///     override func handleChallenge(_ challenge: JSONObject) {
///         showPopup(remainingAttempts: challenge["remainingAttempts"]?.intValue ?? 0)  // ... later:
///         submitChallengeAnswer(["pin": "1234"])
///     }
/// }
/// try client.registerChallengeHandler(PinCodeChallengeHandler(securityCheck: "PinCodeAttempts"))
/// ```
///
/// Subclasses restate `@unchecked Sendable` (Swift requires it of subclasses of an unchecked-`Sendable` class) and
/// must keep their own mutable state safe; ``SecurityCheckChallengeResponder`` is the checked alternative.
/// Register each handler once. `handleChallenge` is called again after a wrong answer. A challenge left
/// unanswered fails its requests after the client's ``ClientConfiguration/challengeTimeout``. The callbacks
/// run on an arbitrary task: hop to the main actor to touch UI.
open class SecurityCheckChallengeHandler: SecurityCheckChallengeResponder, @unchecked Sendable {
    /// The security check this handler answers.
    public let securityCheck: String
    private let pending = PendingAnswer<ChallengeAnswer>()

    /// A handler for the security check named `securityCheck`.
    public init(securityCheck: String) {
        self.securityCheck = securityCheck
    }

    /// Called by the framework with the check's challenge (`{}` when the check sent `null`). Ask the user, then
    /// call ``submitChallengeAnswer(_:)`` or ``cancel()``, now or later.
    open func handleChallenge(_ challenge: JSONObject) {}

    /// Called by the framework when the check succeeded.
    open func handleSuccess(_ success: JSONObject) {}

    /// Called by the framework when the check failed (for instance `{"failure":"Account blocked"}`); the request
    /// fails with ``GatehouseClientError/securityCheckFailed(failures:)``.
    open func handleFailure(_ failure: JSONObject) {}

    /// Sends `answer` to the security check (`nil` sends `null`). Does nothing when no challenge is open.
    public final func submitChallengeAnswer(_ answer: JSONObject?) {
        pending.resume(answer.map(ChallengeAnswer.answer) ?? .empty)
    }

    /// Abandons the open challenge: the request fails with ``GatehouseClientError/challengeCancelled(securityCheck:)``,
    /// and so do the requests that were waiting for this handler.
    public final func cancel() {
        pending.resume(.cancel)
    }

    /// Whether a challenge is waiting for ``submitChallengeAnswer(_:)`` or ``cancel()``.
    public final var isChallengeOpen: Bool { pending.isOpen }

    // MARK: SecurityCheckChallengeResponder

    /// The framework's side: calls ``handleChallenge(_:)`` and waits for ``submitChallengeAnswer(_:)`` or
    /// ``cancel()``. When the framework abandons the challenge (timeout), the open challenge is closed.
    public final func respond(to challenge: JSONObject) async -> ChallengeAnswer {
        await pending.wait(cancelled: .cancel) { handleChallenge(challenge) }
    }
}
