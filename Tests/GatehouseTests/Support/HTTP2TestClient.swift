import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// An HTTP/2 connection over TLS (ALPN `h2`, NIOHTTP2's client) to a loopback port, trusting `caPath`: requests on
/// streams of one connection, which stays open until closed (or until the server closes it).
struct HTTP2TestClient {
    let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer

    static func connect(port: Int, caPath: String) async throws -> HTTP2TestClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caPath)
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        // The HTTP/2 handler is in the pipeline before the connection is: the server's SETTINGS, read as soon as the
        // handshake ends, must not pass an empty pipeline.
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()
                    ) { $0.eventLoop.makeSucceededVoidFuture() }
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        let multiplexer = try await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: NIOHTTP2Handler.self).syncMultiplexer()
        }.get()
        return HTTP2TestClient(channel: channel, multiplexer: multiplexer)
    }

    /// `GET path` on a new stream: the answer's status code, once the whole answer has arrived.
    func get(_ path: String) async throws -> UInt {
        let status = channel.eventLoop.makePromise(of: UInt.self)
        let stream = channel.eventLoop.makePromise(of: Channel.self)
        multiplexer.createStreamChannel(promise: stream) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
                try stream.pipeline.syncOperations.addHandler(StatusCollector(status: status))
            }
        }
        let streamChannel = try await stream.futureResult.get()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
        head.headers.add(name: "host", value: "localhost")
        streamChannel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await streamChannel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        let channel = self.channel
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(10)) {
            status.fail(TestFailure("no whole answer within 10 s to GET \(path); connection active \(channel.isActive), stream active \(streamChannel.isActive)"))
        }
        defer { timeout.cancel() }
        return try await status.futureResult.get()
    }

    /// The status of a stream's answer, at its end.
    private final class StatusCollector: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        let status: EventLoopPromise<UInt>
        init(status: EventLoopPromise<UInt>) { self.status = status }

        private var code: UInt?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): code = head.status.code
            case .body: break
            case .end: if let code { status.succeed(code) }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            status.fail(ChannelError.eof)
            context.fireChannelInactive()
        }
    }
}
