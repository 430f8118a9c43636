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

    /// A stream's answer, whole.
    struct Answer: Sendable {
        var status: UInt
        /// The bytes of its body.
        var bodyBytes: Int
    }

    /// Connects; `initialWindowSize` (bytes) bounds what the server may send on a stream before the client reads it.
    static func connect(port: Int, caPath: String, initialWindowSize: Int? = nil) async throws -> HTTP2TestClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caPath)
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        if let initialWindowSize {
            connection.initialSettings = nioDefaultSettings.filter { $0.parameter != .initialWindowSize }
                + [HTTP2Setting(parameter: .initialWindowSize, value: initialWindowSize)]
        }
        // The HTTP/2 handler is in the pipeline before the connection is: the server's SETTINGS, read as soon as the
        // handshake ends, must not pass an empty pipeline.
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .channelInitializer { [connection] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .client, connectionConfiguration: connection, streamConfiguration: .init()
                    ) { $0.eventLoop.makeSucceededVoidFuture() }
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        let multiplexer = try await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: NIOHTTP2Handler.self).syncMultiplexer()
        }.get()
        return HTTP2TestClient(channel: channel, multiplexer: multiplexer)
    }

    /// `GET path` on a new stream: the answer, once whole. With `beforeReading`, the stream reads nothing of the answer
    /// (so the server's writes wait on flow control) until `beforeReading` has returned.
    func get(_ path: String, beforeReading: (@Sendable () async throws -> Void)? = nil) async throws -> Answer {
        let answer = channel.eventLoop.makePromise(of: Answer.self)
        let stream = channel.eventLoop.makePromise(of: Channel.self)
        let holdReads = beforeReading != nil
        multiplexer.createStreamChannel(promise: stream) { stream in
            stream.eventLoop.makeCompletedFuture {
                if holdReads { try stream.syncOptions?.setOption(.autoRead, value: false) }
                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
                try stream.pipeline.syncOperations.addHandler(AnswerCollector(answer: answer))
            }
        }
        let streamChannel = try await stream.futureResult.get()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
        head.headers.add(name: "host", value: "localhost")
        streamChannel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await streamChannel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        if let beforeReading {
            try await beforeReading()
            try await streamChannel.setOption(.autoRead, value: true).get()
            streamChannel.read()
        }
        let channel = self.channel
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(10)) {
            answer.fail(TestFailure("no whole answer within 10 s to GET \(path); connection active \(channel.isActive), stream active \(streamChannel.isActive)"))
        }
        defer { timeout.cancel() }
        return try await answer.futureResult.get()
    }

    /// A stream's answer, at its end.
    private final class AnswerCollector: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        let answer: EventLoopPromise<Answer>
        private var collected: Answer?

        init(answer: EventLoopPromise<Answer>) { self.answer = answer }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): collected = Answer(status: head.status.code, bodyBytes: 0)
            case .body(let bytes): collected?.bodyBytes += bytes.readableBytes
            case .end: if let collected { answer.succeed(collected) }
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            answer.fail(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            answer.fail(ChannelError.eof)
            context.fireChannelInactive()
        }
    }
}
