import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The default ``HTTPTransport``: `URLSession`, with redirects refused (on Apple platforms and on Linux).
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// A transport over a session of `configuration` (ephemeral by default: cookies live as long as the transport).
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        session = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
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

/// Refuses every redirect, so that the response carrying `Location` reaches the SDK.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
