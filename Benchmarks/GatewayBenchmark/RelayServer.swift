import NIOCore
import NIOPosix

/// The listening side the benchmark's relays share (``ByteRelay``, ``HTTPPartsRelay``, ``HeadRewritingRelay``): a
/// server on 127.0.0.1 (a free port) that gives each accepted connection an upstream connection of its own, on the
/// same event loop, and lets the relay put its handlers on both.
enum RelayServer {
    /// Starts it; `install` runs on the connections' event loop with the client's channel and the upstream's.
    static func start(upstreamHost: String, upstreamPort: Int, group: any EventLoopGroup,
                      install: @escaping @Sendable (_ client: any Channel, _ upstream: any Channel) throws -> Void) async throws -> any Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { client in
                ClientBootstrap(group: client.eventLoop)
                    .connectTimeout(.seconds(5))
                    .connect(host: upstreamHost, port: upstreamPort)
                    .flatMapThrowing { upstream in try install(client, upstream) }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }
}
