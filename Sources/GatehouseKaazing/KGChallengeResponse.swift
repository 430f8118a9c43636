public import Foundation

/// A challenge handler's answer, as KAAZING's `KGChallengeResponse`: the `Authorization` value, and the handler for
/// the next challenge of the connection (`nil`: the same one).
open class KGChallengeResponse: NSObject, @unchecked Sendable {
    /// The `Authorization` value (`Basic am9lOndlbGNvbWU=`).
    public let credentials: String?
    /// The handler that answers the next challenge, if not the same one.
    public let nextChallengeHandler: KGChallengeHandler?

    /// `initWithCredentials:nextChallengeHandler:`.
    public init(credentials: String?, nextChallengeHandler: KGChallengeHandler?) {
        self.credentials = credentials
        self.nextChallengeHandler = nextChallengeHandler
    }
}
