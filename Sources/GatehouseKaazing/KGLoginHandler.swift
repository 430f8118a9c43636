public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Where a ``KGBasicChallengeHandler`` gets a user's name and password, as KAAZING's `KGLoginHandler`: subclass it and
/// override ``credentials()``.
///
/// ``credentials()`` is called on a background thread of its own — never the main thread, never Swift's cooperative
/// pool — because apps block in it (on a semaphore, while the main thread shows a login pop-up). Returning `nil`
/// stops the challenges: the connection fails and closes.
open class KGLoginHandler: NSObject, @unchecked Sendable {
    public override init() {
        super.init()
    }

    /// The user's credentials, or `nil` to give up. The base class gives up.
    open func credentials() -> URLCredential? {
        nil
    }
}
