import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// The gateway's connections: Hummingbird's HTTP/1.1 + WebSocket upgrade channel, with two guards for the first
/// request, where Hummingbird has none: a ``RequestHeadTimeoutHandler`` in front (slowloris) and a
/// ``MalformedFirstRequestHandler`` behind the upgrader (a first request that is not HTTP/1.1 would otherwise
/// leave the connection open and silent forever).
struct GatewayChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let headerReadTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(RequestHeadTimeoutHandler(timeout: headerReadTimeout, logger: logger), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(MalformedFirstRequestHandler(logger: logger), position: .last)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
