import NIOCore

/// Backpressure on one side of a relay: while paused, the channel's `read` is held and issued on resume, so the
/// socket is not read faster than the other side takes what it gives. Used by the upstream HTTP connection and by
/// both sides of a WebSocket bridge (all on one event loop).
struct ReadGate {
    private var paused = false
    private var held = false

    mutating func pause() { paused = true }

    /// Lifts the pause, and issues the read held meanwhile, if any.
    mutating func resume(_ context: ChannelHandlerContext?) {
        paused = false
        if held, let context {
            held = false
            context.read()
        }
    }

    /// The handler's `read(context:)`: passed on, or held while paused.
    mutating func read(_ context: ChannelHandlerContext) {
        if paused {
            held = true
        } else {
            context.read()
        }
    }
}
