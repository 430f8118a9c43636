import GatehouseClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP/1.1 request on its own connection (`Connection: close`) — what the WebSocket client needs besides the
/// upgrade, without an HTTP client package: the gateway's `OPTIONS` admission check, and KAAZING's emulated
/// transport (its create and upstream requests read whole with ``send(_:url:headers:body:configuration:bodyLimit:group:)``,
/// its downstream responses read as they come with ``stream(_:url:headers:configuration:idleTimeout:group:)``).
enum OneShotHTTPRequest {
    struct Response: Sendable {
        var head: HTTPResponseHead
        var body: [UInt8]
    }

    /// A response whose body is read as it comes: its head, then its bytes until the server ends it.
    struct StreamedResponse: Sendable {
        var head: HTTPResponseHead
        /// The body's bytes, read by read; they end when the response does, with an error when the connection
        /// broke or stayed silent for the idle timeout.
        var body: AsyncThrowingStream<ByteBuffer, any Error>
        /// Closes the connection (the body then ends).
        let channel: any Channel
        func close() { channel.close(promise: nil) }
    }

    /// Sends `method` to `url`'s host and target with `headers` and `body` (its `Content-Length` added when there is
    /// one); reads the answer whole (its body up to `bodyLimit`). Fails after the configuration's timeouts (connect,
    /// then TLS and the whole response).
    static func send(
        _ method: HTTPMethod, url: GatewayWebSocketURL, headers: [(name: String, value: String)], body: [UInt8] = [],
        configuration: GatewayWebSocketConfiguration, bodyLimit: Int = 1 << 16,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> Response {
        let eventLoop = group.next()
        let promise = eventLoop.makePromise(of: Response.self)
        let head = requestHead(method, url: url, headers: headers, bodyLength: body.isEmpty && method != .POST ? nil : body.count)
        let reader = WholeResponseReader(bodyLimit: bodyLimit, promise: promise)
        let channel = try await connect(url, configuration: configuration, eventLoop: eventLoop, request: head, body: body, reader: reader)
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

    /// Sends `method` to `url` and returns the response once its head is read (within the handshake timeout); its
    /// body is read as it comes, and fails when nothing arrives for `idleTimeout`.
    static func stream(
        _ method: HTTPMethod, url: GatewayWebSocketURL, headers: [(name: String, value: String)], configuration: GatewayWebSocketConfiguration,
        idleTimeout: Duration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> StreamedResponse {
        let eventLoop = group.next()
        let headPromise = eventLoop.makePromise(of: HTTPResponseHead.self)
        let (body, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
        let reader = StreamingResponseReader(head: headPromise, body: continuation, idleTimeout: TimeAmount(idleTimeout))
        let request = requestHead(method, url: url, headers: headers, bodyLength: nil)
        let channel: any Channel
        do {
            channel = try await connect(url, configuration: configuration, eventLoop: eventLoop, request: request, body: [], reader: reader)
        } catch {
            continuation.finish(throwing: error)
            throw error
        }
        let timeout = eventLoop.scheduleTask(in: TimeAmount(configuration.handshakeTimeout)) {
            headPromise.fail(GatewayClientError.transport("no answer from \(url.hostField) in time"))
        }
        channel.closeFuture.whenComplete { _ in
            headPromise.fail(GatewayClientError.transport("\(url.hostField) closed the connection before answering"))
            continuation.finish(throwing: GatewayClientError.transport("\(url.hostField) closed the connection inside a response"))
        }
        defer { timeout.cancel() }
        do {
            let head = try await headPromise.futureResult.get()
            return StreamedResponse(head: head, body: body, channel: channel)
        } catch {
            channel.close(promise: nil)
            throw error
        }
    }

    private static func requestHead(_ method: HTTPMethod, url: GatewayWebSocketURL, headers: [(name: String, value: String)], bodyLength: Int?) -> HTTPRequestHead {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: url.target)
        head.headers.add(name: "Host", value: url.hostField)
        for field in headers { head.headers.add(name: field.name, value: field.value) }
        if let bodyLength { head.headers.replaceOrAdd(name: "Content-Length", value: String(bodyLength)) }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        return head
    }

    /// Connects (within the connect timeout), TLS for `https`/`wss`, and writes the request once the connection is up.
    private static func connect(
        _ url: GatewayWebSocketURL, configuration: GatewayWebSocketConfiguration, eventLoop: any EventLoop,
        request: HTTPRequestHead, body: [UInt8], reader: some ChannelInboundHandler & Sendable
    ) async throws -> any Channel {
        let sslContext = url.secure ? try NIOSSLContext(configuration: configuration.tls) : nil
        let serverName = configuration.serverName ?? (url.hostIsAddress ? nil : url.host)
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(RequestWriter(request: request, body: body))
                    try channel.pipeline.syncOperations.addHandler(reader)
                }
            }
        return try await bootstrap.connect(host: url.host, port: url.port).get()
    }

    /// Writes the request when the connection is up.
    private final class RequestWriter: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPClientResponsePart
        typealias InboundOut = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart
        let request: HTTPRequestHead
        let body: [UInt8]

        init(request: HTTPRequestHead, body: [UInt8]) {
            self.request = request
            self.body = body
        }

        func channelActive(context: ChannelHandlerContext) {
            context.write(wrapOutboundOut(.head(request)), promise: nil)
            if !body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            context.fireChannelActive()
        }
    }

    /// Reads the response to its end.
    private final class WholeResponseReader: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPClientResponsePart
        let bodyLimit: Int
        let promise: EventLoopPromise<Response>
        // Touched on the channel's event loop only.
        var head: HTTPResponseHead?
        var body: [UInt8] = []

        init(bodyLimit: Int, promise: EventLoopPromise<Response>) {
            self.bodyLimit = bodyLimit
            self.promise = promise
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

    /// Hands the head on as soon as it is read, then the body's bytes as they come; a read timer ends a silent one.
    private final class StreamingResponseReader: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPClientResponsePart
        let head: EventLoopPromise<HTTPResponseHead>
        let body: AsyncThrowingStream<ByteBuffer, any Error>.Continuation
        let idleTimeout: TimeAmount
        // Touched on the channel's event loop only.
        var timer: Scheduled<Void>?

        init(head: EventLoopPromise<HTTPResponseHead>, body: AsyncThrowingStream<ByteBuffer, any Error>.Continuation, idleTimeout: TimeAmount) {
            self.head = head
            self.body = body
            self.idleTimeout = idleTimeout
        }

        func channelActive(context: ChannelHandlerContext) {
            armTimer(context)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            armTimer(context)
            switch unwrapInboundIn(data) {
            case .head(let head) where head.status.code >= 200:
                self.head.succeed(head)
            case .head:
                break  // an interim 1xx
            case .body(let bytes):
                body.yield(bytes)
            case .end:
                timer?.cancel()
                body.finish()
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            timer?.cancel()
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            head.fail(error)
            body.finish(throwing: error)
            context.close(promise: nil)
        }

        private func armTimer(_ context: ChannelHandlerContext) {
            timer?.cancel()
            let body = body
            let channel = context.channel
            let seconds = Double(idleTimeout.nanoseconds) / 1e9
            timer = context.eventLoop.scheduleTask(in: idleTimeout) {
                body.finish(throwing: GatewayClientError.transport("nothing read for \(seconds) s"))
                channel.close(promise: nil)
            }
        }
    }
}
