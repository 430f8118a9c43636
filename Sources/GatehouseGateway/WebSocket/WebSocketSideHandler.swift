import NIOCore
import NIOWebSocket

/// One side of a ``WebSocketBridge``: the last handler of the client's or the upstream's pipeline, behind NIO's
/// WebSocket frame encoder and a ``WebSocketFrameReadingHandler``, which hands it each frame directly. Holds its
/// socket's reads while the bridge asks (backpressure).
final class WebSocketSideHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let side: WebSocketBridge.Side
    private let bridge: WebSocketBridge
    private var context: ChannelHandlerContext?
    /// NIO's frame encoder's place in the pipeline: a frame relayed as it came is written from there, past the encoder.
    private var encoderContext: ChannelHandlerContext?
    private var reads = ReadGate()

    init(side: WebSocketBridge.Side, bridge: WebSocketBridge) {
        self.side = side
        self.bridge = bridge
    }

    var isWritable: Bool { context?.channel.isWritable ?? false }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        encoderContext = try? context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        bridge.attached(self, side: side)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        encoderContext = nil
    }

    /// Writes `frame` exactly as it was received — its header bits, its mask key if any and its payload as it
    /// arrived (still masked when it came masked) — past NIO's frame encoder, which would copy the payload to
    /// unmask it and mask it again; `thenClose`: flushed, and the connection closed once it is written (the answer
    /// to a close). `false` when it cannot (no encoder in the pipeline, extension data): the caller writes it
    /// through the encoder.
    func writeAsItCame(_ frame: WebSocketFrame, thenClose: Bool) -> Bool {
        guard let context, let encoderContext,
              let (head, rest) = WebSocketFrameWriter.asItCame(frame, allocator: encoderContext.channel.allocator) else { return false }
        let written = thenClose ? context.eventLoop.makePromise(of: Void.self) : nil
        encoderContext.write(NIOAny(head), promise: rest == nil ? written : nil)
        if let rest { encoderContext.write(NIOAny(rest), promise: written) }
        if let written {
            context.flush()
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
        return true
    }

    func write(_ frame: WebSocketFrame) {
        context?.write(wrapOutboundOut(frame), promise: nil)
    }

    func flush() { context?.flush() }

    func close() { context?.close(promise: nil) }

    /// Writes `frame`, then closes the connection.
    func writeAndClose(_ frame: WebSocketFrame) {
        guard let context else { return }
        context.writeAndFlush(wrapOutboundOut(frame)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    func pauseReads() { reads.pause() }

    func resumeReads() { reads.resume(context) }

    func read(context: ChannelHandlerContext) { reads.read(context) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received(unwrapInboundIn(data))
    }

    /// A frame read from this side's socket.
    func received(_ frame: WebSocketFrame) {
        bridge.received(frame, from: side)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        bridge.readComplete(side)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        bridge.writabilityChanged(side)
    }

    func channelInactive(context: ChannelHandlerContext) {
        bridge.closed(side)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A malformed or oversized frame, a TLS failure: this side ends (the bridge closes the other).
        context.close(promise: nil)
    }
}

/// A side's frame reader, in front of its ``WebSocketSideHandler``: it reads the frames from the
/// socket's bytes (``WebSocketFrameReader``) and hands each to the side handler directly — no `ByteToMessageHandler`
/// and its generic machinery, no boxing of every frame on its way through the pipeline. A frame that cannot be read
/// closes the connection, as NIO's decoder's error does in front of the side handler (the bridge then closes the other
/// side). On the upstream's side it stands in front of the decoder NIO's upgrader installs, and takes every byte
/// before that decoder leaves the pipeline (a `ByteToMessageHandler` leaves a moment after its removal is asked).
final class WebSocketFrameReadingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private var reader: WebSocketFrameReader
    private let side: WebSocketSideHandler
    /// A frame could not be read: the connection is closing, nothing more is read.
    private var unreadable = false

    init(maxFrameSize: Int, side: WebSocketSideHandler) {
        reader = WebSocketFrameReader(maxFrameSize: maxFrameSize)
        self.side = side
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !unreadable else { return }
        do {
            try reader.read(unwrapInboundIn(data)) { frame in side.received(frame) }
        } catch {
            unreadable = true
            context.close(promise: nil)
        }
    }
}
