import NIOCore
import NIOWebSocket

/// Reads WebSocket frames from a side's bytes (``WebSocketFrameReadingHandler``), with the checks of NIO's
/// `WebSocketFrameDecoder` and its errors: a frame longer than `maxFrameSize` (refused once its length is read, before
/// its payload arrives) or a 64-bit length beyond `Int.max` is `invalidFrameLength`, a fragmented control frame
/// `fragmentedControlFrame`, a control frame over 125 bytes `multiByteControlFrameLength`. No other rule of RFC 6455 is
/// checked here, as NIO's decoder checks none (the bridge refuses reserved opcodes).
///
/// Frames come out as they came: their payload a slice of the bytes read (still masked when masked), so relaying one
/// copies nothing.
struct WebSocketFrameReader {
    let maxFrameSize: Int
    /// Bytes of a frame not complete yet.
    private var pending: ByteBuffer?

    init(maxFrameSize: Int) {
        self.maxFrameSize = maxFrameSize
    }

    /// Adds `bytes` to what was read before and hands every complete frame to `frame`, in order; what remains of an
    /// incomplete frame waits for the next bytes. After an error nothing more should be read.
    mutating func read(_ bytes: ByteBuffer, _ frame: (WebSocketFrame) -> Void) throws(NIOWebSocketError) {
        var buffer: ByteBuffer
        if var pending {
            self.pending = nil
            var bytes = bytes
            pending.writeBuffer(&bytes)
            buffer = pending
        } else {
            buffer = bytes
        }
        while let next = try Self.next(&buffer, maxFrameSize: maxFrameSize) { frame(next) }
        if buffer.readableBytes > 0 { pending = buffer }
    }

    /// The first complete frame of `buffer` (its reader index moved past it), or `nil` when it has not all arrived
    /// (nothing consumed).
    static func next(_ buffer: inout ByteBuffer, maxFrameSize: Int) throws(NIOWebSocketError) -> WebSocketFrame? {
        let start = buffer.readerIndex
        guard let first = buffer.getInteger(at: start, as: UInt8.self), let second = buffer.getInteger(at: start + 1, as: UInt8.self) else {
            return nil
        }
        var index = start + 2
        var length = Int(second & 0x7F)
        if length == 126 {
            guard let word = buffer.getInteger(at: index, as: UInt16.self) else { return nil }
            length = Int(word)
            index += 2
        } else if length == 127 {
            guard let quad = buffer.getInteger(at: index, as: UInt64.self) else { return nil }
            guard quad <= UInt64(Int.max) else { throw .invalidFrameLength }
            length = Int(quad)
            index += 8
        }
        if length > maxFrameSize { throw .invalidFrameLength }
        let isControl = first & 0x08 != 0
        if isControl, first & 0x80 == 0 { throw .fragmentedControlFrame }
        if isControl, length > 125 { throw .multiByteControlFrameLength }
        var maskKey: WebSocketMaskingKey?
        if second & 0x80 != 0 {
            guard let key = buffer.viewBytes(at: index, length: 4) else { return nil }
            maskKey = WebSocketMaskingKey(key)
            index += 4
        }
        guard let data = buffer.getSlice(at: index, length: length) else { return nil }
        buffer.moveReaderIndex(to: index + length)
        return WebSocketFrame(fin: first & 0x80 != 0, rsv1: first & 0x40 != 0, rsv2: first & 0x20 != 0, rsv3: first & 0x10 != 0,
                              opcode: WebSocketOpcode(encodedWebSocketOpcode: first & 0x0F)!, maskKey: maskKey, data: data)
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
