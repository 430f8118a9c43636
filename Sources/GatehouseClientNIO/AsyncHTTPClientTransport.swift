public import AsyncHTTPClient
import Foundation
public import GatehouseClient
import GatehouseProtocol
import NIOCore
import NIOHTTP1

/// An `HTTPTransport` over AsyncHTTPClient (SwiftNIO), for the SDK on Linux servers and command-line tools.
///
/// Use it where Foundation's `URLSession` falls short on Linux, e.g. a gateway realm with the plain `Basic`
/// scheme, whose `401` answers `URLSession` never completes there:
///
/// ```swift
/// let http = GatewayHTTPClient(challengeHandler: BasicChallengeHandler(loginHandler: login),
///                              transport: AsyncHTTPClientTransport())
/// ```
///
/// Redirects are never followed (the SDK reads `Location` itself); bodies up to `maxResponseSize` bytes.
public struct AsyncHTTPClientTransport: HTTPTransport {
    /// A client shared by every transport made without one: connection pools live as long as the process.
    static let sharedClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    let client: HTTPClient
    let maxResponseSize: Int

    /// A transport over `client` (which must not follow redirects), or over a shared one.
    public init(client: HTTPClient? = nil, maxResponseSize: Int = 16 << 20) {
        self.client = client ?? Self.sharedClient
        self.maxResponseSize = maxResponseSize
    }

    public func send(_ request: TransportRequest) async throws(GatehouseClientError) -> TransportResponse {
        var outbound = HTTPClientRequest(url: request.url.absoluteString)
        outbound.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outbound.headers.add(name: name, value: value) }
        if let body = request.body { outbound.body = .bytes(ByteBuffer(bytes: body)) }
        let timeout = TimeAmount.nanoseconds(request.timeout.wholeNanoseconds)
        do {
            try Task.checkCancellation()
            let response = try await client.execute(outbound, timeout: timeout)
            let body = try await response.body.collect(upTo: maxResponseSize)
            var headers: [String: String] = [:]
            for (name, value) in response.headers {
                let key = name.lowercased()
                headers[key] = headers[key].map { "\($0), \(value)" } ?? value
            }
            return TransportResponse(status: Int(response.status.code), headers: headers, body: Data(body.readableBytesView))
        } catch let error as HTTPClientError where error == .cancelled {
            throw .cancelled(underlying: error)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw .timedOut(url: request.url.absoluteString, underlying: error)
        } catch is CancellationError {
            throw .cancelled(underlying: CancellationError())
        } catch {
            throw .transport("\(request.method) \(request.url.absoluteString): \(error)", underlying: error)
        }
    }
}
