import GatehouseHTTP
import GatehouseStore
import HummingbirdCore
import Logging
import NIOCore

extension EventLoopTaskExecutor: StoreCallExecutor {}

/// A server connection (`Inner`) whose task runs on the connection's event loop (``EventLoopTaskExecutor``), and so do
/// the tasks it starts (a task executor preference is inherited by child tasks) and its store calls' work and
/// deadlines (``StoreCalls``); or, with `onEventLoop` false, on Swift concurrency's shared threads as Hummingbird runs it.
struct EventLoopConnectionChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let onEventLoop: Bool
    let inner: Inner

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        guard onEventLoop else { return await inner.handle(value: value, logger: logger) }
        let executor = EventLoopTaskExecutor(value.channel.eventLoop)
        await StoreCalls.$executor.withValue(executor) {
            await withTaskExecutorPreference(executor) {
                await inner.handle(value: value, logger: logger)
            }
        }
    }
}
