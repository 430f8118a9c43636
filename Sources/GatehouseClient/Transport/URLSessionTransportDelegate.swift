public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
package import GatehouseProtocol

/// The delegate of a ``URLSessionTransport``'s session: refuses every redirect, so that the response carrying
/// `Location` reaches the SDK (an authorization code travels in it), and on Apple platforms evaluates servers' trust
/// against the transport's pins (`URLSessionTransportDelegate+ServerTrust.swift`, over ``ServerTrustDecision``).
///
/// Both methods are optional requirements of Apple's delegate protocols: a slip in a name or a label would not fail
/// the build there, but silently follow redirects or skip pinning. `AppleAdapterTests` holds them to the signatures
/// Apple declares (`URLSessionDelegateSignatures` of Tests/AppleStandIns).
package final class URLSessionTransportDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    /// The public keys a server may have; none: the system's evaluation alone.
    package let pins: Set<PublicKeyPin>

    package init(pins: Set<PublicKeyPin>) {
        self.pins = pins
    }

    package func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
