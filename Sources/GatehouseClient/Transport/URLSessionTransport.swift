public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import GatehouseProtocol

/// The default ``HTTPTransport``: `URLSession`, with redirects refused (on Apple platforms and on Linux), and on Apple
/// platforms, servers' public keys pinned when `pins` are given.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// A transport over a session of `configuration` (ephemeral by default: cookies live as long as the transport).
    public convenience init(configuration: URLSessionConfiguration = .ephemeral) {
        self.init(configuration: configuration, parsedPins: [])
    }

    /// A transport that talks only to servers whose certificate carries one of `pins` (`sha256/` and the base64 of a
    /// SubjectPublicKeyInfo's SHA-256, as `PinnedHTTPTransport` takes them; `WLClient.pinTrustedCertificatePublicKey`
    /// reads them from a certificate). On Apple platforms a server whose chain is trusted but whose own certificate
    /// carries none of these keys gets nothing: the call fails before the request leaves. Pin the server's key and a
    /// backup key. On Linux, Foundation's URLSession hands no server trust to a delegate: use `PinnedHTTPTransport`
    /// (GatehouseClientNIO) there; pins are refused here.
    /// - Throws: `invalidArgument` for a malformed pin, none at all, or pins on Linux.
    public convenience init(configuration: URLSessionConfiguration = .ephemeral, pins: [String]) throws(GatehouseClientError) {
        let parsed = try PublicKeyPin.transportPins(pins)
        #if !canImport(Security)
        throw .invalidArgument("URLSession cannot pin public keys on this platform: use PinnedHTTPTransport")
        #else
        self.init(configuration: configuration, parsedPins: parsed)
        #endif
    }

    private init(configuration: URLSessionConfiguration, parsedPins: Set<PublicKeyPin>) {
        session = URLSession(configuration: configuration, delegate: URLSessionTransportDelegate(pins: parsedPins), delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends `request` without following redirects. A cancelled task ends the request at once with
    /// `cancelled`; a timeout is `timedOut`, other failures
    /// `transport`, with the `URLError` as their cause.
    public func send(_ request: TransportRequest) async throws(GatehouseClientError) -> TransportResponse {
        let (seconds, attoseconds) = request.timeout.components
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
                                    timeoutInterval: Double(seconds) + Double(attoseconds) / 1e18)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        do {
            try Task.checkCancellation()
            let (data, response) = try await session.data(for: urlRequest)
            try Task.checkCancellation()
            guard let http = response as? HTTPURLResponse else { throw GatehouseClientError.transport("not an HTTP response") }
            var headers: [String: String] = [:]
            for (key, value) in http.allHeaderFields {
                headers[String(describing: key)] = String(describing: value)
            }
            return TransportResponse(status: http.statusCode, headers: headers, body: data)
        } catch {
            throw Self.error(error, for: request)
        }
    }

    /// A failure as the SDK reports it: cancellation as `cancelled`, a timeout as
    /// `timedOut`, anything else as `transport`; the
    /// `URLError` is kept as the ``GatehouseClientError/underlying`` cause.
    static func error(_ error: any Error, for request: TransportRequest) -> GatehouseClientError {
        GatehouseClientError.wrapping(error) { error in
            if (error as? URLError)?.code == .timedOut { return .timedOut(url: request.url.absoluteString, underlying: error) }
            return .transport("\(request.method) \(request.url.absoluteString): \(error.localizedDescription)", underlying: error)
        }
    }
}
