import Foundation
public import GatehouseClient
public import GatehouseProtocol
import NIOCore
import NIOHTTP1
import NIOPosix
public import NIOSSL
import NIOTLS

/// An `HTTPTransport` over SwiftNIO that talks only to servers whose certificate carries a pinned public key
/// (`PublicKeyPin`): certificate pinning by SPKI hash, as OkHttp's `CertificatePinner` or Alamofire's public-key
/// evaluator do it.
///
/// The usual checks stay: the certificate chain against the trust roots (the system's, or the CA certificates given)
/// and the host name (or IP address). Then, when the TLS handshake is done and before a byte of the request leaves,
/// the server certificate's SubjectPublicKeyInfo must hash to one of the pins; otherwise the connection is closed and
/// the call fails with `transport` ("… public key is not pinned …"). Pin the server's key and a backup key.
///
/// ```swift
/// let transport = try PinnedHTTPTransport(pins: ["sha256/q7F…=", "sha256/backupKey…="])
/// let client = GatehouseClient(configuration: configuration, transport: transport)
/// ```
///
/// HTTPS only; one connection per request (`Connection: close`), which suits the SDK's few calls to the authorization
/// server (``AsyncHTTPClientTransport`` keeps connections but cannot pin). Redirects are not followed.
public struct PinnedHTTPTransport: HTTPTransport {
    /// The public keys a server may have.
    public let pins: Set<PublicKeyPin>
    let context: NIOSSLContext
    let maxResponseSize: Int

    /// A transport trusting `trustRoots` (the system's by default) and, among the servers they vouch for, only those
    /// whose key is one of `pins` (`PublicKeyPin` texts: `sha256/` and the base64 of the SPKI's SHA-256).
    /// - Throws: `invalidArgument` for a malformed pin, none at all, or trust
    ///   roots that cannot be read.
    public init(pins: [String], trustRoots: NIOSSLTrustRoots = .default, maxResponseSize: Int = 16 << 20) throws(GatehouseClientError) {
        let parsed = try PublicKeyPin.transportPins(pins)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = trustRoots
        tls.minimumTLSVersion = .tlsv12
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw .invalidArgument("the TLS configuration cannot be used: \(error)", underlying: error)
        }
        self.pins = parsed
        self.maxResponseSize = maxResponseSize
    }

    public func send(_ request: TransportRequest) async throws(GatehouseClientError) -> TransportResponse {
        let url = request.url.absoluteString
        guard request.url.scheme?.lowercased() == "https", let host = request.url.host, !host.isEmpty else {
            throw .invalidArgument("a pinned transport sends only https requests, not \(url)")
        }
        let exchange = PinnedExchange(request: request, host: host, port: request.url.port ?? 443, pins: pins, context: context,
                                      maxResponseSize: maxResponseSize)
        do {
            try Task.checkCancellation()
            return try await exchange.run()
        } catch let error as GatehouseClientError {
            throw error
        } catch is CancellationError {
            throw .cancelled(underlying: CancellationError())
        } catch let error as PinnedExchange.TimedOut {
            throw .timedOut(url: url, underlying: error)
        } catch {
            throw .transport("\(request.method) \(url): \(error)", underlying: error)
        }
    }
}

/// One request on a connection of its own: connect, TLS handshake, pin check, request, whole response, close.
struct PinnedExchange: Sendable {
    struct TimedOut: Error, CustomStringConvertible {
        var description: String { "no complete answer in time" }
    }

    let request: TransportRequest
    let host: String
    let port: Int
    let pins: Set<PublicKeyPin>
    let context: NIOSSLContext
    let maxResponseSize: Int

    func run() async throws -> TransportResponse {
        let group = MultiThreadedEventLoopGroup.singleton
        let loop = group.next()
        let handshake = loop.makePromise(of: Void.self)
        let answer = loop.makePromise(of: TransportResponse.self)
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        let (context, maxResponseSize) = (context, maxResponseSize)
        let timeout = TimeAmount.nanoseconds(request.timeout.wholeNanoseconds)
        let channel = try await ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host))
                    try pipeline.addHandler(HandshakeWatcher(handshake))
                    try pipeline.addHTTPClientHandlers()
                    try pipeline.addHandler(ResponseCollector(answer, maxResponseSize: maxResponseSize))
                }
            }
            .connect(host: host, port: port).get()
        let deadline = loop.scheduleTask(in: timeout) {
            handshake.fail(TimedOut())
            answer.fail(TimedOut())
            channel.close(promise: nil)
        }
        defer {
            deadline.cancel()
            channel.close(promise: nil)
        }
        return try await withTaskCancellationHandler {
            try await handshake.futureResult.get()
            guard let certificate = try await channel.nioSSL_peerCertificate().get() else {
                throw GatehouseClientError.transport("\(request.url.absoluteString): the server sent no certificate")
            }
            let key = PublicKeyPin(spki: try certificate.extractPublicKey().toSPKIBytes())
            guard pins.contains(key) else {
                throw GatehouseClientError.transport(
                    "\(request.url.absoluteString): the server's public key is not pinned (it is \(key)); nothing was sent")
            }
            var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: Self.target(of: request.url))
            head.headers.add(name: "Host", value: request.url.port.map { "\(host):\($0)" } ?? host)
            for (name, value) in request.headers { head.headers.add(name: name, value: value) }
            head.headers.replaceOrAdd(name: "Connection", value: "close")
            if let body = request.body { head.headers.replaceOrAdd(name: "Content-Length", value: String(body.count)) }
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            if let body = request.body, !body.isEmpty { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil) }
            try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
            return try await answer.futureResult.get()
        } onCancel: {
            handshake.fail(CancellationError())
            answer.fail(CancellationError())
        }
    }

    /// The request target: path (at least `/`) and query, as sent on the request line.
    static func target(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? "/"
        let query = components?.percentEncodedQuery.map { "?" + $0 } ?? ""
        return (path.isEmpty ? "/" : path) + query
    }
}

/// Fulfils a promise when the TLS handshake is done; fails it if the connection fails or ends first.
private final class HandshakeWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let promise: EventLoopPromise<Void>

    init(_ promise: EventLoopPromise<Void>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { promise.succeed(()) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }
}

/// Collects one response (head, body up to a bound, end) into a ``TransportResponse``.
private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    let promise: EventLoopPromise<TransportResponse>
    let maxResponseSize: Int
    private var head: HTTPResponseHead?
    private var body = ByteBuffer()

    init(_ promise: EventLoopPromise<TransportResponse>, maxResponseSize: Int) {
        self.promise = promise
        self.maxResponseSize = maxResponseSize
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let received) where received.status.code >= 200:
            head = received
        case .head:
            break   // 1xx: the answer follows
        case .body(var part):
            guard body.readableBytes + part.readableBytes <= maxResponseSize else {
                promise.fail(GatehouseClientError.transport("the answer is larger than \(maxResponseSize) bytes"))
                context.close(promise: nil)
                return
            }
            body.writeBuffer(&part)
        case .end:
            guard let head else { return promise.fail(ChannelError.inappropriateOperationForState) }
            var headers: [String: String] = [:]
            for (name, value) in head.headers {
                let key = name.lowercased()
                headers[key] = headers[key].map { "\($0), \(value)" } ?? value
            }
            promise.succeed(TransportResponse(status: Int(head.status.code), headers: headers, body: Data(body.readableBytesView)))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }
}
