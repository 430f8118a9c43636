public import Foundation

/// KAAZING's abstract challenge handler: answers the gateway's `401` challenges on the WebSocket's handshake (and its
/// in-band revalidation challenges). Subclass it (override ``canHandle(_:)`` and ``handle(_:)``), or use
/// ``KGBasicChallengeHandler`` and ``KGDispatchChallengeHandler``.
///
/// ``handle(_:)`` is called on a background thread of its own (never the main thread, never Swift's cooperative
/// pool), so it may block — a login handler waiting for the user, say.
open class KGChallengeHandler: NSObject, @unchecked Sendable {
    public override init() {
        super.init()
    }

    /// KAAZING's factory method, for its concrete subclasses (`[KGBasicChallengeHandler create]`). The abstract
    /// class creates a handler that handles nothing (KAAZING's raises an exception).
    open class func create() -> KGChallengeHandler {
        KGChallengeHandler()
    }

    /// Whether this handler can answer `challengeRequest`. The abstract handler cannot.
    open func canHandle(_ challengeRequest: KGChallengeRequest?) -> Bool {
        false
    }

    /// The answer to `challengeRequest`, or `nil` to stop answering (the connection fails and closes).
    open func handle(_ challengeRequest: KGChallengeRequest?) -> KGChallengeResponse? {
        nil
    }
}
