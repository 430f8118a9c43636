import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// The answer of both floors: what the unprotected endpoint answers.
private let helloText = "Hello from an unprotected resource"

/// Runs `body` against a Hummingbird server of one route (`GET /hello`) and no middleware, on 127.0.0.1 in this
/// process: the framework's own cost per request.
func withBareHummingbird<T: Sendable>(_ body: (_ baseURL: String) async throws -> T) async throws -> T {
    var logger = Logger(label: "hummingbird-floor")
    logger.logLevel = .warning
    let router = Router()
    router.get("hello") { _, _ in
        Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: helloText)))
    }
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "Gatehouse"),
                          onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
    return try await running(app, ports: ports, continuation: continuation, logger: logger) { port in
        try await body("http://127.0.0.1:\(port)")
    }
}

/// Runs `body` against NIO's HTTP/1.1 server pipeline answering every request with the same text on the event
/// loop, on 127.0.0.1 in this process: HTTP's cost without Hummingbird's per-connection task, router and
/// middleware (what an event-loop path for hot endpoints could reach at best).
func withBareNIO<T: Sendable>(_ body: (_ baseURL: String) async throws -> T) async throws -> T {
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(HelloHandler())
            }
        }
        .bind(host: "127.0.0.1", port: 0).get()
    let port = channel.localAddress?.port ?? 0
    do {
        let result = try await body("http://127.0.0.1:\(port)")
        try await channel.close()
        return result
    } catch {
        try? await channel.close()
        throw error
    }
}

/// Answers each request, once its end arrived, with ``helloText``.
private final class HelloHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var keepAlive = true

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): keepAlive = head.isKeepAlive
        case .body: break
        case .end:
            var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(helloText.utf8.count))])
            if !keepAlive { headers.add(name: "Connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: helloText)))), promise: nil)
            let keepAlive = self.keepAlive
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in
                if !keepAlive { channel.close(promise: nil) }
            }
        }
    }
}
