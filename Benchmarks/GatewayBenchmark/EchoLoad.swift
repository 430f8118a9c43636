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

    /// Opens `count` authenticated connections (each echoes one message, so the relay to the upstream is up),
    /// calls `measure` while they are all open and idle, then closes them. Bounded by `timeout`.
    static func whileIdle<T: Sendable>(url: String, authorization: String, count: Int, timeout: Duration,
                                       measure: @escaping @Sendable (_ opened: Int) async -> T) async throws -> T {
        let shared = Shared()
        let deadline = ContinuousClock.now + timeout
        return try await withThrowingTaskGroup(of: T?.self) { group in
            for index in 0..<count {
                group.addTask {
                    // A few at a time, so that the listen backlog is never the limit.
                    try await Task.sleep(for: .milliseconds(index / 25 * 20))
                    try await WebSocketClient.connect(url: url, configuration: configuration(authorization), logger: logger) { inbound, outbound, _ in
                        var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                        try await outbound.write(.text("hello"))
                        _ = try await messages.next()
                        shared.count.add(1, ordering: .relaxed)
                        while !shared.release.load(ordering: .relaxed), ContinuousClock.now < deadline {
                            try await Task.sleep(for: .milliseconds(200))
                        }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                    return nil
                }
            }
            group.addTask {
                while shared.count.load(ordering: .relaxed) < count, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(100))
                }
                try await Task.sleep(for: .seconds(1))  // let the gateway settle
                let result = await measure(shared.count.load(ordering: .relaxed))
                shared.release.store(true, ordering: .relaxed)
                return result
            }
            var measured: T?
            for try await result in group { if let result { measured = result } }
            return measured!
        }
    }
}

/// State the load's tasks share.
final class Shared: Sendable {
    let count = Atomic<Int>(0)
    let release = Atomic<Bool>(false)
}
