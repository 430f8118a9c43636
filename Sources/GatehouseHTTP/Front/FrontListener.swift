package import Logging
package import NIOCore
import NIOExtras
import NIOPosix
package import ServiceLifecycle

/// The project's own listener, for both commands (`gatehouse gateway` and `gatehouse serve`): it accepts connections
/// on NIO's event loops and sets each up right there with `initialize` — no task and no hop to Swift concurrency per
/// connection. Accept pressure is watched (``AcceptPressureHandler``: the descriptor budget); on graceful shutdown it
/// stops accepting, tells every connection to close when idle (`ChannelShouldQuiesceEvent`: after the answer in
/// progress) and returns once they all have. Cancelled instead (a sibling service failed), it stops accepting and does
/// not wait for connections that may live on (WebSockets).
package struct FrontListener: Service {
    package let host: String
    package let port: Int
    /// What the log says is listening (`gateway listening`, `server listening`).
    package let name: String
    package let logger: Logger
    /// Sets up an accepted connection, on its event loop.
    package let initialize: @Sendable (any Channel) -> EventLoopFuture<Void>
    /// Counted when a connection is refused for want of descriptors, and when accepting pauses.
    package let refused: @Sendable () -> Void
    package let paused: @Sendable () -> Void
    /// Called with the bound port once the listener listens.
    package let onServerRunning: @Sendable (Int) async -> Void

    package init(host: String, port: Int, name: String, logger: Logger, initialize: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>,
                 refused: @escaping @Sendable () -> Void, paused: @escaping @Sendable () -> Void,
                 onServerRunning: @escaping @Sendable (Int) async -> Void) {
        self.host = host
        self.port = port
        self.name = name
        self.logger = logger
        self.initialize = initialize
        self.refused = refused
        self.paused = paused
        self.onServerRunning = onServerRunning
    }

    package func run() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let quiescing = ServerQuiescingHelper(group: group)
        let initialize = self.initialize
        let server = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                }
            }
            // The client may end its side and still read the answer (`inputClosed`).
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in initialize(channel) }
            .bind(host: host, port: port)
            .get()
        let bound = server.localAddress?.port ?? port
        logger.info("\(name) listening", metadata: ["host": .string(host), "port": .stringConvertible(bound)])
        await AcceptPressureHandler.install(on: server, logger: logger, refused: refused, paused: paused)
        await onServerRunning(bound)
        do {
            try await gracefulShutdown()
        } catch {
            try? await server.close()
            return
        }
        let closed = server.eventLoop.makePromise(of: Void.self)
        quiescing.initiateShutdown(promise: closed)
        try await closed.futureResult.get()
    }
}
