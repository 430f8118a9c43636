package import HummingbirdCore
package import Logging
package import NIOCore

/// A server connection (`Inner`, e.g. Hummingbird's `HTTP1Channel`) with a ``RequestHeadTimeoutHandler`` in front:
/// the first request head must arrive within `headerReadTimeout` (slowloris); later requests rely on the inner
/// channel's idle timeout.
package struct HeadTimeoutChannel<Inner: ServerChildChannel>: ServerChildChannel {
    package typealias Value = Inner.Value

    let inner: Inner
    let headerReadTimeout: TimeAmount
    let answerBody: String

    /// - Parameter answerBody: the JSON body of the `408` sent when the head is late.
    package init(inner: Inner, headerReadTimeout: TimeAmount, answerBody: String) {
        self.inner = inner
        self.headerReadTimeout = headerReadTimeout
        self.answerBody = answerBody
    }

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(
                RequestHeadTimeoutHandler(timeout: headerReadTimeout, progress: FirstRequestProgress(), answerBody: answerBody, logger: logger),
                position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger)
    }

    package func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
