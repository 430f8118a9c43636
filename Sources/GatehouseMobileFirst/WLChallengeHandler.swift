import Foundation
import GatehouseClient
import GatehouseProtocol

/// MobileFirst's base of every challenge handler: a security check's name, and the failure and success hooks.
///
/// Its hooks run on the main thread, as MobileFirst calls them, and Swift knows it: the class is a main-actor class,
/// so a subclass's own methods may touch UIKit in the Swift 6 language mode. What MobileFirst lets any thread do
/// stays callable from anywhere: both initializers (a subclass's `override init() { super.init(securityCheck: …) }`
/// included), ``securityCheck``, and ``SecurityCheckChallengeHandler/submitChallengeAnswer(_:)`` and
/// ``SecurityCheckChallengeHandler/cancel()``.
@MainActor
open class BaseChallengeHandler: NSObject {
    /// The security check this handler answers.
    public nonisolated let securityCheck: String
    /// The SDK's handler behind this one: challenges in, answers out.
    nonisolated let bridge: ChallengeBridge

    /// The initializer MobileFirst's handler classes inherit from `NSObject`, so that a subclass can override it and
    /// name its check there (`override init() { super.init(securityCheck: "UserLogin") }`). A handler made with it
    /// and nothing else answers no check (its ``securityCheck`` is empty).
    public nonisolated override init() {
        securityCheck = ""
        bridge = ChallengeBridge(securityCheck: "")
        super.init()
    }

    /// A handler for the security check named `securityCheck`; register it with
    /// `WLClient.sharedInstance().registerChallengeHandler(_:)`.
    public nonisolated init(securityCheck: String!) {
        self.securityCheck = securityCheck ?? ""
        bridge = ChallengeBridge(securityCheck: securityCheck ?? "")
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
///     override func handleChallenge(_ challenge: [AnyHashable: Any]!) {
///         let remainingAttempts = challenge["remainingAttempts"] as! Int
///         showPopup(remainingAttempts)   // ... later: self.submitChallengeAnswer(["pin": pin])
///     }
/// }
/// WLClient.sharedInstance().registerChallengeHandler(PinCodeChallengeHandler(securityCheck: "PinCodeAttempts"))
/// ```
///
/// Every hook runs on the main thread. A challenge left unanswered fails its requests after the client's
/// challenge timeout (60 s).
open class SecurityCheckChallengeHandler: BaseChallengeHandler {
    /// Called with the check's challenge (`errorMsg` is `NSNull` when there is none): ask the user.
    open func handleChallenge(_ challenge: [AnyHashable: Any]!) { handleChallenge(challenge: challenge) }
    /// ``handleChallenge(_:)`` as the MobileFirst tutorials override it (`handleChallenge(challenge:)`).
    open func handleChallenge(challenge: [AnyHashable: Any]!) {}

    /// Sends the user's answer to the security check (values JSON can hold: text, numbers, flags, `NSNull`, arrays
    /// and dictionaries of those), from any thread.
    public nonisolated func submitChallengeAnswer(_ answer: [AnyHashable: Any]!) {
        bridge.submitChallengeAnswer(answer.map(JSONBridging.object))
    }

    /// Abandons the challenge, from any thread: the request fails with the error code
    /// `WLErrorCode.challengeHandlingCanceled`.
    public nonisolated func cancel() {
        bridge.cancel()
    }

    override func challenge(_ challenge: [AnyHashable: Any]) {
        handleChallenge(challenge)
    }
}

/// The handler class of MobileFirst 8.0's earliest tutorials (`WLChallengeHandler`, `submitFailure`).
open class WLChallengeHandler: SecurityCheckChallengeHandler {
    /// Abandons the challenge, as ``SecurityCheckChallengeHandler/cancel()`` does (the `error` is not sent).
    public nonisolated func submitFailure(_ error: [AnyHashable: Any]!) {
        cancel()
    }
}

/// The SDK's side of a ``BaseChallengeHandler``: the SDK's own handler, which calls the app's hooks on the main thread.
final class ChallengeBridge: GatehouseSDK.SecurityCheckChallengeHandler, @unchecked Sendable {
    /// Set once, in the handler's initializer, before the handler is shared.
    nonisolated(unsafe) weak var owner: BaseChallengeHandler?

    override func handleChallenge(_ challenge: JSONObject) {
        MainThread.async { [weak self] in self?.owner?.challenge(JSONBridging.dictionary(challenge)) }
    }

    override func handleSuccess(_ success: JSONObject) {
        MainThread.async { [weak self] in self?.owner?.handleSuccess(JSONBridging.dictionary(success)) }
    }

    override func handleFailure(_ failure: JSONObject) {
        MainThread.async { [weak self] in self?.owner?.handleFailure(JSONBridging.dictionary(failure)) }
    }
}
