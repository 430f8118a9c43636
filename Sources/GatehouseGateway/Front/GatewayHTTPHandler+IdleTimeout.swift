import GatehouseHTTP
import NIOCore

/// The connection's timers: the first head's deadline from the opening, a later head's from its first byte, and the
/// idle timeout between requests or inside a stalled body (``GatewayConnectionStateMachine`` decides; this runs it).
extension GatewayHTTPHandler {
    // MARK: The idle timeout

    /// Closes the connection once it has read nothing for the idle timeout while idle between requests or inside
    /// a request's body; an exchange waiting for its upstream is the upstream's read timeout's business.
    func armIdleTimer() {
        guard idleTimer == nil, let context else { return }
        scheduleIdleCheck(context, at: machine.lastActivity + machine.idleTimeout)
    }

    /// The first request's head has `headTimeout` from the connection's opening (the TLS handshake included): a client
    /// that opens connections and sends half a request line, or a byte now and then, holds them that long at most.
    func firstHeadDue(_ context: ChannelHandlerContext) {
        guard let due = machine.opened(now: now) else { return }
        idleTimer?.cancel()
        scheduleIdleCheck(context, at: due)
    }

    /// A later head began to arrive and is not complete: it has `headTimeout` from its first byte, however it dribbles.
    func headArriving() {
        guard let context, let due = machine.headArriving(now: now) else { return }
        idleTimer?.cancel()
        scheduleIdleCheck(context, at: due)
    }

    /// `408` and the close: a request's head did not arrive whole within `headTimeout`. What the client sent of it
    /// is read on while the answer goes out (``LingeringClose``): a close with unread bytes would reset the connection
    /// and could lose the answer.
    func headTimedOut(_ context: ChannelHandlerContext) {
        gateway.logger.debug("closing a connection whose request head did not arrive in time")
        let answer = GatewayAnswer.invalidRequest("the request head did not arrive in time", status: 408)
        let bytes = answer.bytes(minorVersion: 1, close: true, withBody: true, allocator: allocator)
        _ = machine.close()
        reader.end()
        LingeringClose.answerAndClose(context, wrapOutboundOut(bytes))
    }

    func scheduleIdleCheck(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        // Holds `self` until it runs or is cancelled (`close`, `channelInactive`, `handlerRemoved` cancel it): no weak
        // reference, which would put every retain and release of the handler on the runtime's slow path.
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.idleTimer = nil
            guard let context = self.context else { return }
            switch self.machine.timerFired(now: self.now) {
            case .none:
                return
            case .reschedule(let deadline):
                self.scheduleIdleCheck(context, at: deadline)
            case .headTimedOut:
                self.headTimedOut(context)
            case .closeIdle:
                self.gateway.logger.debug("closing an idle connection")
                self.close()
            }
        }
    }
}
