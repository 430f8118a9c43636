// Apple-only: compiled into GatehouseClient where Security exists, and on Linux into GatehouseClientAppleAdapters
// (Tests/AppleStandIns) against a stand-in of the Security API it calls, where AppleAdapterTests runs it.
#if canImport(Security) || APPLE_STAND_INS
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
#if canImport(Security)
import Security
#else
import SecurityStandIn
#endif
#if APPLE_STAND_INS
public import GatehouseClient
#endif

extension URLSessionTransportDelegate {
    /// Server trust: the system's evaluation, then the transport's pins (``ServerTrustDecision``).
    package func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
              let trust = challenge.protectionSpace.serverTrust else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        var error: CFError?
        let evaluated = SecTrustEvaluateWithError(trust, &error)
        let chain = (SecTrustCopyCertificateChain(trust) as? [SecCertificate] ?? []).map { SecCertificateCopyData($0) as Data }
        switch ServerTrustDecision(pins: pins, evaluated: evaluated, chain: chain) {
        case .performDefaultHandling: completionHandler(.performDefaultHandling, nil)
        case .useTrust: completionHandler(.useCredential, URLCredential(trust: trust))
        case .cancel: completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }
}
#endif
