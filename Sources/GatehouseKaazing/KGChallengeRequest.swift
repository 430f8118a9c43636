public import Foundation
import GatehouseClient

/// A challenge from the gateway, as KAAZING's `KGChallengeRequest`: where it came from and its scheme and parameters
/// (an `Application` prefix taken off: `Application Basic realm="x"` is a `Basic` challenge).
open class KGChallengeRequest: NSObject, @unchecked Sendable {
    let request: ChallengeRequest

    /// The challenge `challenge` (a `WWW-Authenticate` value) for `location` (`initWithLocation:challenge:`).
    public init(location: String, challenge: String) {
        request = ChallengeRequest(location: URL(string: location) ?? URL(fileURLWithPath: "/"), challenge: challenge)
    }

    init(_ request: ChallengeRequest) {
        self.request = request
    }

    /// The location challenged (the WebSocket's URL).
    open var location: String { request.location.absoluteString }
    /// The scheme: `Basic`, `Negotiate`, `Token`, ...
    open var authenticationScheme: String { request.authenticationScheme }
    /// What follows the scheme (`realm="Demo Realm"`), if anything.
    open var authenticationParameters: String? { request.authenticationParameters }
}
