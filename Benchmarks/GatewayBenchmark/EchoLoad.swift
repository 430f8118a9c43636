import BenchmarkSupport
import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import Synchronization

/// WebSocket load: ping-pong echo connections, and idle authenticated ones.
enum EchoLoad {
    static var logger: Logger {
        var logger = Logger(label: "bench-client")
        logger.logLevel = .error
        return logger
    }

    static func configuration(_ authorization: String?) -> WebSocketClientConfiguration {
        var headers = HTTPFields()
        if let authorization { headers[.authorization] = authorization }
        return .init(maxFrameSize: 1 << 16, additionalHeaders: headers)
    }

    /// Echoed messages per second over `connections` connections, each sending a 32-byte message and waiting
    /// for its echo, back to back, for `seconds`.
    static func rate(url: String, authorization: String?, connections: Int, seconds: Double) async throws -> Double {
        let counted = Shared()
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<connections {
                group.addTask {
                    try await WebSocketClient.connect(url: url, configuration: configuration(authorization), logger: logger) { inbound, outbound, _ in
                        var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                        let payload = String(repeating: "x", count: 32)
                        var count = 0
                        while ContinuousClock.now < deadline {
                            try await outbound.write(.text(payload))
                            guard try await messages.next() != nil else { break }
                            count += 1
                        }
                        counted.count.add(count, ordering: .relaxed)
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                }
            }
            try await group.waitForAll()
        }
        return Double(counted.count.load(ordering: .relaxed)) / (ContinuousClock.now - start).seconds
    }

    /// How many idle connections are opened at once.
    static let idleBatch = 100

    /// Opens authenticated connections up to each of `counts` in turn (each echoes one message, so the relay to the
    /// upstream is up), and once that many have echoed and sat idle for a second calls `measure` with the count, the
    /// connections staying open for the next count; then closes them all. Fails as soon as a connection fails, and
    /// when a count is not reached within `timeout` (from the start).
    static func whileIdle<T: Sendable>(url: String, authorization: String, counts: [Int], timeout: Duration,
                                       measure: @Sendable (_ opened: Int) async throws -> T) async throws -> [T] {
        let shared = Shared()
        let deadline = ContinuousClock.now + timeout
        return try await withThrowingTaskGroup(of: Void.self) { group in
            defer { shared.release.store(true, ordering: .relaxed) }
            var opened = 0
            var results: [T] = []
            for count in counts {
                // A batch at a time, each open before the next: neither the listen backlogs nor the gateway's
                // upstream connect timeout is then the limit (8,000 at 25 every 20 ms was too fast here).
                while opened < count {
                    let batch = min(count, opened + idleBatch)
                    for _ in opened..<batch {
                        group.addTask {
                            do {
                                try await idleConnection(url: url, authorization: authorization, shared: shared, deadline: deadline)
                            } catch {
                                shared.failed(error)
                                throw error
                            }
                        }
                    }
                    try await shared.waitUntilOpen(batch, deadline: deadline)
                    opened = batch
                }
                try await Task.sleep(for: .seconds(1))  // let the gateway settle
                try shared.checkNoFailure()
                results.append(try await measure(shared.count.load(ordering: .relaxed)))
            }
            shared.release.store(true, ordering: .relaxed)
            try await group.waitForAll()
            return results
        }
    }

    /// One idle connection: one message echoed, then open and silent until `shared.release` or `deadline`.
    private static func idleConnection(url: String, authorization: String, shared: Shared, deadline: ContinuousClock.Instant) async throws {
        try await WebSocketClient.connect(url: url, configuration: configuration(authorization), logger: logger) { inbound, outbound, _ in
            var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
            try await outbound.write(.text("hello"))
            guard try await messages.next() != nil else { throw Wrk.Failure(description: "an idle WebSocket was closed before its echo") }
            shared.count.add(1, ordering: .relaxed)
            defer { shared.count.subtract(1, ordering: .relaxed) }
            while !shared.release.load(ordering: .relaxed), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
            }
            try await outbound.close(.normalClosure, reason: nil)
        }
        guard shared.release.load(ordering: .relaxed) else {
            throw Wrk.Failure(description: "an idle WebSocket ended before it was released (closed by the gateway or the upstream?)")
        }
    }
}

/// State the load's tasks share.
final class Shared: Sendable {
    /// Connections open (idle ones: echoed once, not yet closed).
    let count = Atomic<Int>(0)
    let release = Atomic<Bool>(false)
    private let failure = Mutex<String?>(nil)

    /// Remembers a connection's failure (the first one).
    func failed(_ error: any Error) { failure.withLock { $0 = $0 ?? "\(error)" } }

    /// Throws the first connection's failure, if any.
    func checkNoFailure() throws {
        if let message = failure.withLock({ $0 }) { throw Wrk.Failure(description: "an idle WebSocket failed: \(message)") }
    }

    /// Returns once `count` connections are open; throws when one failed, or at `deadline`.
    func waitUntilOpen(_ count: Int, deadline: ContinuousClock.Instant) async throws {
        while self.count.load(ordering: .relaxed) < count {
            try checkNoFailure()
            guard ContinuousClock.now < deadline else {
                throw Wrk.Failure(description: "only \(self.count.load(ordering: .relaxed)) of \(count) idle WebSockets open in time")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
