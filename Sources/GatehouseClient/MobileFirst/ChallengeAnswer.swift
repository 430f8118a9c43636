import GatehouseProtocol

/// What an app does with a challenge.
public enum ChallengeAnswer: Sendable, Equatable {
    /// Answer with these credentials (`{"pin":"1234"}`, `{"answer":"7"}`, `{"username":..,"password":..}`).
    case answer(JSONObject)
    /// Answer with nothing (`null`), as MobileFirst's `submitChallengeAnswer(nil)`: the check decides.
    case empty
    /// Give up: the request fails with ``GatehouseClientError/challengeCancelled(securityCheck:)``, and so do the
    /// requests that were waiting for this handler.
    case cancel
}

/// Answers the challenges of one security check, the Swift-concurrency way: the framework awaits
/// ``respond(to:)`` and sends what it returns.
///
/// Register one responder per check with ``GatehouseClient/registerChallengeHandler(_:)``. The framework
/// guarantees that one challenge at a time is put to a responder: requests that need the same check while a
/// challenge is open wait for its outcome instead of prompting again. ``SecurityCheckChallengeHandler`` is the
/// imperative variant of the seeds (`handleChallenge` + `submitChallengeAnswer`/`cancel`).
public protocol SecurityCheckChallengeResponder: Sendable {
    /// The security check this responder answers, such as `PinCodeAttempts`.
    var securityCheck: String { get }
    /// Asks the user (or anything else) and returns the answer. Called again after a wrong answer, with the
    /// check's new challenge (for `PinCodeAttempts`, a smaller `remainingAttempts`). The task is cancelled when
    /// the challenge is abandoned (timeout, or another check of the same request was cancelled).
    func respond(to challenge: JSONObject) async -> ChallengeAnswer
    /// The check succeeded, with its success data (for `UserLogin`, `{"user":{...}}`).
    func handleSuccess(_ success: JSONObject) async
    /// The check failed, with its failure data (for `PinCodeAttempts`, `{"failure":"Account blocked"}`); the
    /// request fails with ``GatehouseClientError/securityCheckFailed(failures:)``.
    func handleFailure(_ failure: JSONObject) async
    /// The open challenge was abandoned without an answer from the app: `reason` is
    /// `challengeTimedOut` (nobody answered within the challenge timeout) or
    /// `cancelled` (every request that waited for it was cancelled, or another check of
    /// the same round failed). Take the prompt down.
    func challengeAbandoned(_ reason: GatehouseClientError) async
}

extension SecurityCheckChallengeResponder {
    /// Does nothing by default.
    public func handleSuccess(_ success: JSONObject) async {}
    /// Does nothing by default.
    public func handleFailure(_ failure: JSONObject) async {}
    /// Does nothing by default.
    public func challengeAbandoned(_ reason: GatehouseClientError) async {}
}

/// A ``SecurityCheckChallengeResponder`` made of closures.
public struct ClosureChallengeResponder: SecurityCheckChallengeResponder {
    /// The security check this responder answers.
    public let securityCheck: String
    private let respond: @Sendable (JSONObject) async -> ChallengeAnswer
    private let success: @Sendable (JSONObject) async -> Void
    private let failure: @Sendable (JSONObject) async -> Void
    private let abandoned: @Sendable (GatehouseClientError) async -> Void

    /// - Parameters:
    ///   - securityCheck: the check's name.
    ///   - onSuccess: called with the check's success data.
    ///   - onFailure: called with the check's failure data.
    ///   - onAbandoned: called when a challenge was abandoned without an answer (timeout, callers cancelled).
    ///   - respond: answers a challenge.
    public init(
        securityCheck: String, onSuccess: @escaping @Sendable (JSONObject) async -> Void = { _ in },
        onFailure: @escaping @Sendable (JSONObject) async -> Void = { _ in },
        onAbandoned: @escaping @Sendable (GatehouseClientError) async -> Void = { _ in },
        respond: @escaping @Sendable (JSONObject) async -> ChallengeAnswer
    ) {
        self.securityCheck = securityCheck
        self.respond = respond
        self.success = onSuccess
        self.failure = onFailure
        self.abandoned = onAbandoned
    }

    /// Calls the `respond` closure.
    public func respond(to challenge: JSONObject) async -> ChallengeAnswer { await respond(challenge) }
    /// Calls the `onSuccess` closure.
    public func handleSuccess(_ success: JSONObject) async { await self.success(success) }
    /// Calls the `onFailure` closure.
    public func handleFailure(_ failure: JSONObject) async { await self.failure(failure) }
    /// Calls the `onAbandoned` closure.
    public func challengeAbandoned(_ reason: GatehouseClientError) async { await abandoned(reason) }
}
