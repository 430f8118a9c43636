import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default ``HTTPTransport``: `URLSession`, with redirects refused (on Apple platforms and on Linux).
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// A transport over a session of `configuration` (ephemeral by default: cookies live as long as the transport).
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        session = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends `request` without following redirects; a timeout becomes ``GatehouseClientError/timedOut(url:)``,
    /// other failures ``GatehouseClientError/transport(_:)``.
    public func send(_ request: TransportRequest) async throws(GatehouseClientError) -> TransportResponse {
        let (seconds, attoseconds) = request.timeout.components
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
                                    timeoutInterval: Double(seconds) + Double(attoseconds) / 1e18)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        do {
            let (data, response) = try await session.data(for: urlRequest)
            guard let http = response as? HTTPURLResponse else { throw GatehouseClientError.transport("not an HTTP response") }
            var headers: [String: String] = [:]
            for (key, value) in http.allHeaderFields {
                headers[String(describing: key)] = String(describing: value)
            }
            return TransportResponse(status: http.statusCode, headers: headers, body: data)
        } catch let error as GatehouseClientError {
            throw error
        } catch let error as URLError where error.code == .timedOut {
            throw .timedOut(url: request.url.absoluteString)
        } catch {
            throw .transport("\(request.method) \(request.url.absoluteString): \(error.localizedDescription)")
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
