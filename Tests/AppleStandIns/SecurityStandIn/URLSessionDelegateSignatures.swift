// The URLSession delegate methods the SDK implements, as Apple's iOS SDK declares them (URLSessionDelegate and
// URLSessionTaskDelegate, Foundation): optional Objective-C requirements there, so a slip in a name, a label or a type
// would compile and silently never be called. AppleAdapterTests makes `URLSessionTransportDelegate` conform to this
// protocol, so the build fails on such a slip.
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// `urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)` (URLSessionTaskDelegate) and
/// `urlSession(_:didReceive:completionHandler:)` (URLSessionDelegate), with Apple's signatures.
public protocol URLSessionDelegateSignatures {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void)

    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)
}
