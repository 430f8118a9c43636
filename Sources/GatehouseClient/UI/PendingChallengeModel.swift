#if canImport(Observation)
public import Foundation
import GatehouseProtocol
public import Observation

/// The challenges waiting for the user, as observable state for SwiftUI: a view shows ``current`` and calls
/// ``submit(_:)-([String:String])`` or ``cancel()``; the prompt goes away by itself when the challenge is answered,
/// abandoned (timeout, every request cancelled) or the check fails.
///
/// ```swift
/// @State var challenges = PendingChallengeModel()
/// // at start-up: try challenges.register(securityChecks: ["PinCodeAttempts"], with: client)
///
/// .sheet(item: $challenges.current) { pending in
///     // PinPrompt: the app's own view (a PIN field and a cancel button).
///     PinPrompt(pending: pending, submit: { challenges.submit(["pin": $0]) }, cancel: { challenges.cancel() })
/// }
/// ```
///
/// Observation (`@Observable`) needs iOS 17 and macOS 14: on iOS 16, drive a view from ``MainActorChallengeResponder``
/// with the app's own `ObservableObject`.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class PendingChallengeModel: MainActorChallengeResponder {
    /// A challenge waiting for the user.
    public struct PendingChallenge: Identifiable, Sendable, Equatable {
        /// A new id per challenge (a wrong answer brings a new one).
        public let id: UUID
        /// The security check that asks.
        public let securityCheck: String
        /// The check's challenge (`{"remainingAttempts":2,"errorMsg":"..."}` for `PinCodeAttempts`).
        public let challenge: JSONObject

        /// `remainingAttempts`, when the check says.
        public var remainingAttempts: Int? { challenge["remainingAttempts"]?.intValue }
        /// The check's message (`errorMsg`), when it has one.
        public var errorMessage: String? { challenge["errorMsg"]?.stringValue }
    }

    /// The challenges waiting, oldest first (a round may challenge several checks at once).
    public private(set) var pending: [PendingChallenge] = []
    /// The failure data of the last check that failed (`{"failure":"Account blocked"}`), until the next challenge.
    public private(set) var lastFailure: JSONObject?
    /// Why the last challenge was abandoned, until the next challenge.
    public private(set) var lastAbandonment: GatehouseClientError?

    @ObservationIgnored private var handlers: [String: MainActorChallengeHandler] = [:]

    /// An empty model; register it for the checks it presents with ``register(securityChecks:with:)``.
    public nonisolated init() {}

    /// The challenge to show now: the oldest waiting. Setting it to `nil` (a dismissed sheet) cancels it.
    public var current: PendingChallenge? {
        get { pending.first }
        set { if newValue == nil, pending.first != nil { cancel() } }
    }

    /// Registers a ``MainActorChallengeHandler`` driving this model for each of `securityChecks` with `client`.
    public func register(securityChecks: [String], with client: GatehouseClient) throws(GatehouseClientError) {
        for check in securityChecks {
            let handler = MainActorChallengeHandler(securityCheck: check, responder: self)
            try client.registerChallengeHandler(handler)
            handlers[check] = handler
        }
    }

    /// Answers ``current`` with string credentials (`["pin": "1234"]`); `false` when it was no longer open.
    @discardableResult
    public func submit(_ answer: [String: String]) -> Bool {
        submit(answer.mapValues(JSON.string))
    }

    /// Answers ``current`` with `answer`; `false` when it was no longer open (the answer came too late).
    @discardableResult
    public func submit(_ answer: JSONObject?) -> Bool {
        guard let current = pending.first else { return false }
        pending.removeFirst()
        return handlers[current.securityCheck]?.submitChallengeAnswer(answer) ?? false
    }

    /// Cancels ``current``: its requests fail with `challengeCancelled`.
    @discardableResult
    public func cancel() -> Bool {
        guard let current = pending.first else { return false }
        pending.removeFirst()
        return handlers[current.securityCheck]?.cancel() ?? false
    }

    // MARK: MainActorChallengeResponder

    /// Shows the challenge.
    public func handleChallenge(_ challenge: JSONObject, from handler: MainActorChallengeHandler) {
        handlers[handler.securityCheck] = handler
        pending.removeAll { $0.securityCheck == handler.securityCheck }
        lastFailure = nil
        lastAbandonment = nil
        pending.append(PendingChallenge(id: UUID(), securityCheck: handler.securityCheck, challenge: challenge))
    }

    /// Keeps the failure and takes the check's prompt down.
    public func handleFailure(_ failure: JSONObject, from handler: MainActorChallengeHandler) {
        lastFailure = failure
        pending.removeAll { $0.securityCheck == handler.securityCheck }
    }

    /// Takes the check's prompt down.
    public func handleSuccess(_ success: JSONObject, from handler: MainActorChallengeHandler) {
        pending.removeAll { $0.securityCheck == handler.securityCheck }
    }

    /// Keeps the reason and takes the check's prompt down.
    public func challengeAbandoned(_ reason: GatehouseClientError, from handler: MainActorChallengeHandler) {
        lastAbandonment = reason
        pending.removeAll { $0.securityCheck == handler.securityCheck }
    }
}
#endif
