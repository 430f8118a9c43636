import GatehouseClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP/1.1 request on its own connection (`Connection: close`), read to its end: the status, header fields and
/// body (up to a limit) — what the WebSocket client needs besides the upgrade (the gateway's `OPTIONS` admission
/// check), without an HTTP client package.
enum OneShotHTTPRequest {
    struct Response: Sendable {
        var head: HTTPResponseHead
        var body: [UInt8]
    }

    /// Sends `method` to `url`'s host and target with `headers`; fails after `timeout` (connect, TLS and response).
    static func send(
        _ method: HTTPMethod, url: GatewayWebSocketURL, headers: [(name: String, value: String)], configuration: GatewayWebSocketConfiguration,
        bodyLimit: Int = 1 << 16, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> Response {
        let sslContext = url.secure ? try NIOSSLContext(configuration: configuration.tls) : nil
        let serverName = configuration.serverName ?? (url.hostIsAddress ? nil : url.host)
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: url.target)
        head.headers.add(name: "Host", value: url.hostField)
        for field in headers { head.headers.add(name: field.name, value: field.value) }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        let eventLoop = group.next()
        let promise = eventLoop.makePromise(of: Response.self)
        let request = head
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ResponseReader(request: request, bodyLimit: bodyLimit, promise: promise))
                }
            }
        let channel = try await bootstrap.connect(host: url.host, port: url.port).get()
        let timeout = eventLoop.scheduleTask(in: TimeAmount(configuration.handshakeTimeout)) {
            promise.fail(GatewayClientError.transport("no answer from \(url.hostField) in time"))
        }
        channel.closeFuture.whenComplete { _ in promise.fail(GatewayClientError.transport("\(url.hostField) closed the connection before answering")) }
        defer {
            timeout.cancel()
            channel.close(promise: nil)
        }
        return try await promise.futureResult.get()
    }

    /// Writes the request when the connection is up and reads the response to its end.
    private final class ResponseReader: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart
        let request: HTTPRequestHead
        let bodyLimit: Int
        let promise: EventLoopPromise<Response>
        var head: HTTPResponseHead?
        var body: [UInt8] = []

        init(request: HTTPRequestHead, bodyLimit: Int, promise: EventLoopPromise<Response>) {
            self.request = request
            self.bodyLimit = bodyLimit
            self.promise = promise
        }

        func channelActive(context: ChannelHandlerContext) {
            context.write(wrapOutboundOut(.head(request)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head) where head.status.code >= 200:
                self.head = head
            case .head:
                break  // an interim 1xx
            case .body(let bytes):
                body.append(contentsOf: bytes.readableBytesView.prefix(bodyLimit - body.count))
            case .end:
                if let head { promise.succeed(Response(head: head, body: body)) }
                context.close(promise: nil)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(error)
            context.close(promise: nil)
        }
    }
}
