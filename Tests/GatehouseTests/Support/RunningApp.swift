import Hummingbird
import Logging
import ServiceLifecycle

/// A Hummingbird application (or the gateway's server) running on a free loopback port until `stop()`.
struct RunningApp: Sendable {
    let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// Starts the application that `make` builds; `make` gets the callback to pass as `onServerRunning`.
    static func start<App: Service>(
        logger: Logger, _ make: (@escaping @Sendable (Int) async -> Void) async throws -> App
    ) async throws -> RunningApp {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = try await make { port in continuation.yield(port) }
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw TestFailure("server did not start") }
        return RunningApp(port: port, group: group, task: task)
    }

    /// A router on a free loopback port.
    static func start<Context: RequestContext>(router: Router<Context>) async throws -> RunningApp
    where Context.Source == ApplicationRequestContextSource {
        var logger = Logger(label: "test-service")
        logger.logLevel = .warning
        return try await start(logger: logger) { onRunning in
            Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                        onServerRunning: { await onRunning($0.localAddress?.port ?? 0) }, logger: logger)
        }
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}
