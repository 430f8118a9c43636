import NIOSSL
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import Synchronization

/// Relays HTTP requests to upstreams with AsyncHTTPClient, bodies streamed both ways.
struct HTTPProxy: Sendable {
    /// Redirects are never followed (the client sees the upstream's). Up to 512 keep-alive connections per
    /// upstream: AsyncHTTPClient's default of 8 would queue a busy gateway's requests behind each other.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(120)), decompression: .disabled)
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 512)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// Header fields that are about one connection only (RFC 9110 §7.6.1), never forwarded.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-connection", "host",
    ]
    /// Set by the gateway for the upstream; never taken from the client.
    static let userHeader = "X-Gateway-User"

    let timeout: TimeAmount
    /// The client for this gateway's upstreams: the shared one, or one trusting the configured CA file.
    let client: HTTPClient

    /// - Parameter upstreamTLS: the trust for upstreams and a name for it (the CA file): one client per name for the
    ///   process's life (AsyncHTTPClient clients must be shut down, never simply dropped).
    init(timeout: TimeAmount, upstreamTLS: (configuration: TLSConfiguration, name: String)? = nil) {
        self.timeout = timeout
        client = upstreamTLS.map { Self.client(trusting: $0.configuration, name: $0.name) } ?? Self.client
    }

    private static let trustingClients = Mutex<[String: HTTPClient]>([:])

    private static func client(trusting tls: TLSConfiguration, name: String) -> HTTPClient {
        trustingClients.withLock { clients in
            if let client = clients[name] { return client }
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: tls, redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(120)),
                decompression: .disabled)
            configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 512)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[name] = client
            return client
        }
    }
    /// Upstream bodies up to this size, with a `Content-Length`, are relayed as one buffer; larger ones stream.
    static let bufferedBodyLimit = 64 * 1024

    /// Sends `request` to `url` (built by ``ProtectedService/upstreamURL(remainder:query:webSocket:)`` from the checked target,
    /// the realm's credential parameters already removed). Never forwarded: hop-by-hop fields, `Authorization`, the
    /// realm's credential headers and cookies, a client's `X-Gateway-User`, and a client's forwarding fields
    /// (replaced by `forwarding`).
    func forward(_ request: Request, to url: String, subject: Subject?, realm: Realm?, forwarding: ForwardingHeaders,
                 onUpstreamError: @Sendable () -> Void = {}) async throws -> Response {
        var outbound = HTTPClientRequest(url: url)
        outbound.method = HTTPMethod(rawValue: request.method.rawValue)
        let connectionTokens = Set(request.headers[values: .connection].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        let credentialHeaders = Set((realm?.headers ?? []).map { $0.lowercased() })
        for field in request.headers {
            let name = field.name.canonicalName
            if Self.hopByHop.contains(name) || connectionTokens.contains(name) || name == "authorization" || name == "cookie"
                || name == Self.userHeader.lowercased() || credentialHeaders.contains(name) || ForwardingHeaders.isForwardingField(name)
                || name.utf8.contains(UInt8(ascii: "_")) { continue }
            outbound.headers.add(name: field.name.rawName, value: field.value)
        }
        let cookies = request.headers[values: .cookie]
        if !cookies.isEmpty, let cookie = CredentialCarriers.cookieField(cookies, removing: Set(realm?.cookies ?? [])) {
            outbound.headers.add(name: "Cookie", value: cookie)
        }
        for (name, value) in forwarding.fields { outbound.headers.add(name: name, value: value) }
        if let name = subject?.name { outbound.headers.add(name: Self.userHeader, value: name) }
        let clientBodyFailure = ClientRequestBody.ReadFailure()
        let body = ClientRequestBody(body: request.body, failure: clientBodyFailure)
        if let length = request.headers[.contentLength].flatMap({ Int64($0) }) {
            if length > 0 { outbound.body = .stream(body, length: .known(length)) }
        } else if request.headers[.transferEncoding] != nil {
            outbound.body = .stream(body, length: .unknown)
        }
        let upstream: HTTPClientResponse
        do {
            upstream = try await client.execute(outbound, timeout: timeout)
        } catch {
            if clientBodyFailure.happened { return GatewayAnswer.invalidRequest("the request body is malformed or incomplete").response }
            onUpstreamError()
            return GatewayAnswer.badGateway.response
        }
        var headers = HTTPFields()
        let upstreamConnectionTokens = Set(upstream.headers["connection"].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        for (name, value) in upstream.headers {
            let lower = name.lowercased()
            if Self.hopByHop.contains(lower) || upstreamConnectionTokens.contains(lower) { continue }
            if let fieldName = HTTPField.Name(name) { headers.append(HTTPField(name: fieldName, value: value)) }
        }
        let status = HTTPResponse.Status(code: Int(upstream.status.code))
        // A small body of known length is read whole: one buffer instead of a stream saves a task hop per chunk.
        if let length = upstream.headers.first(name: "content-length").flatMap(Int.init), length <= Self.bufferedBodyLimit {
            do {
                let body = try await upstream.body.collect(upTo: Self.bufferedBodyLimit)
                headers[.contentLength] = nil  // set again from the buffer
                return Response(status: status, headers: headers, body: .init(byteBuffer: body))
            } catch {
                onUpstreamError()
                return GatewayAnswer.badGateway.response
            }
        }
        return Response(status: status, headers: headers, body: ResponseBody(asyncSequence: upstream.body))
    }
}
