import GatehouseProtocol

/// A security check's challenges for UI code: every hook runs on the main actor.
///
/// Swift 6 does not let a subclass of ``SecurityCheckChallengeHandler`` be `@MainActor`; conform a view
/// controller or a view model to this protocol instead and register it through a ``MainActorChallengeHandler``.
/// Answer with the handler's ``SecurityCheckChallengeHandler/submitChallengeAnswer(_:)-(JSONObject?)`` or
/// ``SecurityCheckChallengeHandler/cancel()``, now or later.
///
/// ```swift
/// @MainActor final class PinPrompt: MainActorChallengeResponder {
///     func handleChallenge(_ challenge: JSONObject, from handler: MainActorChallengeHandler) {
///         let alert = UIAlertController(title: "PIN", message: challenge["errorMsg"]?.stringValue, preferredStyle: .alert)
///         alert.addTextField()
///         alert.addAction(UIAlertAction(title: "OK", style: .default) { _ in
///             handler.submitChallengeAnswer(["pin": alert.textFields?.first?.text ?? ""])
///         })
///         present(alert)
///     }
///     func challengeAbandoned(_ reason: GatehouseClientError, from handler: MainActorChallengeHandler) { dismissAlert() }
/// }
/// try client.registerChallengeHandler(MainActorChallengeHandler(securityCheck: "PinCodeAttempts", responder: prompt))
/// ```
@MainActor
public protocol MainActorChallengeResponder: AnyObject, Sendable {
    /// A challenge of `handler`'s check: ask the user, then answer through `handler`.
    func handleChallenge(_ challenge: JSONObject, from handler: MainActorChallengeHandler)
    /// The check succeeded.
    func handleSuccess(_ success: JSONObject, from handler: MainActorChallengeHandler)
    /// The check failed (the request fails with `securityCheckFailed`).
    func handleFailure(_ failure: JSONObject, from handler: MainActorChallengeHandler)
    /// The open challenge was abandoned (timeout, or every request waiting for it was cancelled): take the prompt down.
    func challengeAbandoned(_ reason: GatehouseClientError, from handler: MainActorChallengeHandler)
}

extension MainActorChallengeResponder {
    /// Does nothing by default.
    public func handleSuccess(_ success: JSONObject, from handler: MainActorChallengeHandler) {}
    /// Does nothing by default.
    public func handleFailure(_ failure: JSONObject, from handler: MainActorChallengeHandler) {}
    /// Does nothing by default.
    public func challengeAbandoned(_ reason: GatehouseClientError, from handler: MainActorChallengeHandler) {}
}

/// The ``SecurityCheckChallengeHandler`` of a ``MainActorChallengeResponder``: delivers each hook to the responder on
/// the main actor, in the order the framework called them.
public final class MainActorChallengeHandler: SecurityCheckChallengeHandler, @unchecked Sendable {
    /// The responder (held strongly: the client keeps its handlers for its lifetime).
    public let responder: any MainActorChallengeResponder
    private let queue: MainActorQueue

    /// A handler of `securityCheck` whose hooks go to `responder` on the main actor.
    public init(securityCheck: String, responder: any MainActorChallengeResponder) {
        self.responder = responder
        queue = MainActorQueue()
        super.init(securityCheck: securityCheck)
    }

    /// Passes the challenge to the responder on the main actor.
    public override func handleChallenge(_ challenge: JSONObject) {
        queue.enqueue { [responder] in responder.handleChallenge(challenge, from: self) }
    }

    /// Passes the success to the responder on the main actor.
    public override func handleSuccess(_ success: JSONObject) {
        queue.enqueue { [responder] in responder.handleSuccess(success, from: self) }
    }

    /// Passes the failure to the responder on the main actor.
    public override func handleFailure(_ failure: JSONObject) {
        queue.enqueue { [responder] in responder.handleFailure(failure, from: self) }
    }

    /// Tells the responder, on the main actor, that the challenge was abandoned.
    public override func challengeAbandoned(_ reason: GatehouseClientError) {
        queue.enqueue { [responder] in responder.challengeAbandoned(reason, from: self) }
    }
}

/// Runs closures on the main actor one after the other, in the order they were enqueued (separate
/// `Task { @MainActor in }` calls promise no order).
final class MainActorQueue: Sendable {
    private let continuation: AsyncStream<@MainActor @Sendable () -> Void>.Continuation

    init() {
        let (stream, continuation) = AsyncStream<@MainActor @Sendable () -> Void>.makeStream()
        self.continuation = continuation
        Task { @MainActor in
            for await job in stream { job() }
        }
    }

    deinit { continuation.finish() }

    func enqueue(_ job: @escaping @MainActor @Sendable () -> Void) {
        continuation.yield(job)
    }
}
