import Foundation
import GatehouseClient
import GatehouseProtocol

/// MobileFirst's base of every challenge handler: a security check's name, and the failure and success hooks.
/// Its hooks run on the main thread (the main actor), as MobileFirst calls them.
@MainActor
open class BaseChallengeHandler: NSObject {
    /// The security check this handler answers.
    public let securityCheck: String
    /// The SDK's handler behind this one: challenges in, answers out.
    let bridge: ChallengeBridge

    /// A handler for the security check named `securityCheck`; register it with
    /// `WLClient.sharedInstance().registerChallengeHandler(_:)`.
    public init(securityCheck: String) {
        self.securityCheck = securityCheck
        bridge = ChallengeBridge(securityCheck: securityCheck)
        super.init()
        bridge.owner = self
    }

    /// Called when the security check failed (`{"failure": "Account blocked"}`); the request fails.
    open func handleFailure(_ failure: [AnyHashable: Any]!) { handleFailure(failure: failure) }
    /// ``handleFailure(_:)`` as the MobileFirst tutorials override it (`handleFailure(failure:)`).
    open func handleFailure(failure: [AnyHashable: Any]!) {}

    /// Called when the security check succeeded, with what it sent.
    open func handleSuccess(_ success: [AnyHashable: Any]!) { handleSuccess(success: success) }
    /// ``handleSuccess(_:)`` as the MobileFirst tutorials override it (`handleSuccess(success:)`).
    open func handleSuccess(success: [AnyHashable: Any]!) {}

    /// Called with a challenge (only ``SecurityCheckChallengeHandler`` answers challenges).
    func challenge(_ challenge: [AnyHashable: Any]) {}
}

/// MobileFirst's handler of a security check's challenges: subclass it, override ``handleChallenge(_:)`` to ask the
/// user, then call ``submitChallengeAnswer(_:)`` with the answer (`["pin": "1234"]`) or ``cancel()``.
///
/// ```swift
/// class PinCodeChallengeHandler: SecurityCheckChallengeHandler {
///     override func handleChallenge(challenge: [AnyHashable: Any]!) {
///         let remainingAttempts = challenge["remainingAttempts"] as! Int
///         showPopup(remainingAttempts)   // ... later: self.submitChallengeAnswer(["pin": pin])
///     }
/// }
/// WLClient.sharedInstance().registerChallengeHandler(PinCodeChallengeHandler(securityCheck: "PinCodeAttempts"))
/// ```
///
/// Every hook runs on the main thread. A challenge left unanswered fails its requests after the client's
/// challenge timeout (60 s).
@MainActor
open class SecurityCheckChallengeHandler: BaseChallengeHandler {
    /// Called with the check's challenge (`errorMsg` is `NSNull` when there is none): ask the user.
    open func handleChallenge(_ challenge: [AnyHashable: Any]!) { handleChallenge(challenge: challenge) }
    /// ``handleChallenge(_:)`` as the MobileFirst tutorials override it (`handleChallenge(challenge:)`).
    open func handleChallenge(challenge: [AnyHashable: Any]!) {}

    /// Sends the user's answer to the security check (values JSON can hold: text, numbers, flags, `NSNull`, arrays
    /// and dictionaries of those).
    public func submitChallengeAnswer(_ answer: [AnyHashable: Any]!) {
        bridge.submitChallengeAnswer(answer.map(JSONBridging.object))
    }

    /// Abandons the challenge: the request fails with the error code `WLErrorCode.challengeHandlingCanceled`.
    public func cancel() {
        bridge.cancel()
    }

    override func challenge(_ challenge: [AnyHashable: Any]) {
        handleChallenge(challenge)
    }
}

/// The handler class of MobileFirst 8.0's earliest tutorials (`WLChallengeHandler`, `submitFailure`).
@MainActor
open class WLChallengeHandler: SecurityCheckChallengeHandler {
    /// Abandons the challenge, as ``SecurityCheckChallengeHandler/cancel()`` does (the `error` is not sent).
    public func submitFailure(_ error: [AnyHashable: Any]!) {
        cancel()
    }
}

/// The SDK's side of a ``BaseChallengeHandler``: the SDK's own handler, which calls the app's hooks on the main actor.
final class ChallengeBridge: GatehouseSDK.SecurityCheckChallengeHandler, @unchecked Sendable {
    /// Set once at the handler's creation, read on the main actor only.
    nonisolated(unsafe) weak var owner: BaseChallengeHandler?

    override func handleChallenge(_ challenge: JSONObject) {
        let converted = JSONBridging.dictionary(challenge)
        Task { @MainActor [weak self] in self?.owner?.challenge(converted) }
    }

    override func handleSuccess(_ success: JSONObject) {
        let converted = JSONBridging.dictionary(success)
        Task { @MainActor [weak self] in self?.owner?.handleSuccess(converted) }
    }

    override func handleFailure(_ failure: JSONObject) {
        let converted = JSONBridging.dictionary(failure)
        Task { @MainActor [weak self] in self?.owner?.handleFailure(converted) }
    }
}
