import Foundation
import Logging
import GatehouseProtocol

/// Where the SDK reports what happens: every subscriber of ``GatehouseClient/events(bufferSize:)`` and the configuration's
/// logger (late answers at `warning`, failed flows and abandoned challenges at `notice` unless the caller
/// cancelled them, everything else at `debug`). Never blocks: a slow subscriber's oldest
/// events are dropped beyond its buffer.
final class ClientObserver: Sendable {
    let logger: Logger
    private let subscribers = Locked<[UInt64: AsyncStream<GatehouseEvent>.Continuation]>([:])
    private let nextID = Locked<UInt64>(0)

    init(logger: Logger) {
        self.logger = logger
    }

    /// A new stream of the events from now on; it ends when the subscriber stops iterating.
    func stream(bufferSize: Int) -> AsyncStream<GatehouseEvent> {
        let id = nextID.withLock { id in id += 1; return id }
        let (stream, continuation) = AsyncStream<GatehouseEvent>.makeStream(bufferingPolicy: .bufferingNewest(bufferSize))
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    /// Reports `event` to the logger and every subscriber.
    func report(_ event: GatehouseEvent) {
        switch event.kind {
        case .lateAnswer:
            logger.warning("\(event): the answer came when no challenge was open and was not sent")
        case .tokenFailed where event.error?.code != .cancelled, .challengeAbandoned where event.error?.code != .cancelled:
            logger.notice("\(event)")
        default:
            logger.debug("\(event)")
        }
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    /// Ends every subscriber's stream.
    func finish() {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
