import Foundation
import GatehouseHTTP
import GatehouseStore
@testable import GatehouseServer
import Hummingbird
import Logging
import NIOPosix
import Testing

/// A request's task on its connection's event loop (``ServeFront``, ``RouterChannelHandler``): the routes, the store
/// calls' work and their deadlines run on the thread that owns the socket; with the option off
/// (``ServerConfiguration/connectionTasksOnEventLoop``), on Swift concurrency's shared threads, the answer written all
/// the same. Either way a store call past its deadline is answered at the deadline.
@Suite(.timeLimit(.minutes(2))) struct RequestTaskExecutorTests {
    /// Where a request's parts ran, as the route saw it.
    struct Seen: Codable {
        var routeOnLoop: Bool
        var storeCallOnLoop: Bool
        var timedOut: Bool
        var secondsToDeadline: Double
    }

    static func seen(onEventLoop: Bool) async throws -> Seen {
        let router = Router(context: GatehouseRequestContext.self)
        router.get("where") { _, _ -> Response in
            let routeOnLoop = MultiThreadedEventLoopGroup.currentEventLoop != nil
            let storeCallOnLoop = try await withStoreDeadline(.seconds(5), "a probe") { MultiThreadedEventLoopGroup.currentEventLoop != nil }
            let start = ContinuousClock.now
            var timedOut = false
            do {
                try await withStoreDeadline(.milliseconds(100), "a frozen call") { try? await Task.sleep(for: .seconds(3)) }
            } catch let error as StoreUnavailable where error.kind == .timedOut {
                timedOut = true
            }
            let seen = Seen(routeOnLoop: routeOnLoop, storeCallOnLoop: storeCallOnLoop, timedOut: timedOut,
                            secondsToDeadline: (ContinuousClock.now - start).seconds)
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(seen))))
        }
        var logger = Logger(label: "event-loop-connection-test")
        logger.logLevel = .warning
        let front = ServeFront(responder: router.buildResponder(), loopAnswers: nil, idleTimeout: .seconds(30),
                               headerReadTimeout: .seconds(10), bodyTimeout: .seconds(10), requestsOnEventLoop: onEventLoop,
                               serverName: nil, maxBody: 1024, logger: logger)
        let app = try await RunningApp.start(logger: logger) { onRunning in
            FrontListener(host: "127.0.0.1", port: 0, name: "test", logger: logger, initialize: { front.initialize($0) },
                          refused: {}, paused: {}, onServerRunning: onRunning)
        }
        defer { Task { await app.stop() } }
        let response = try await HTTP.send(.GET, "http://127.0.0.1:\(app.port)/where")
        #expect(response.status == 200)
        return try JSONDecoder().decode(Seen.self, from: response.body)
    }

    @Test func aConnectionsRequestsAndStoreCallsRunOnItsEventLoop() async throws {
        let seen = try await Self.seen(onEventLoop: true)
        #expect(seen.routeOnLoop)
        #expect(seen.storeCallOnLoop)
        #expect(seen.timedOut)
        #expect(seen.secondsToDeadline < 2, "a store call past its deadline was answered after \(seen.secondsToDeadline) s")
    }

    @Test func offTheyRunOnTheSharedPoolAsBefore() async throws {
        let seen = try await Self.seen(onEventLoop: false)
        #expect(!seen.routeOnLoop)
        #expect(!seen.storeCallOnLoop)
        #expect(seen.timedOut)
        #expect(seen.secondsToDeadline < 2, "a store call past its deadline was answered after \(seen.secondsToDeadline) s")
    }
}
