// A WebSocket frame's bytes both ways, for the bridge's relay: read from a side's socket (`WebSocketFrameReader`)
// and written as they came (`WebSocketFrameWriter`).
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

/// Writes a relayed frame's bytes as it came (``WebSocketSideHandler/writeAsItCame(_:)``), past NIO's frame encoder,
/// which would copy a masked payload to unmask it and mask it again.
enum WebSocketFrameWriter {
    /// Payloads up to this size are written in one buffer with their header (one copy of a few bytes is cheaper than
    /// a second buffer in the socket's write); larger ones go as they are, after a header of their own.
    static let inlinePayload = 512

    /// The bytes of `frame` as it was received: its header (FIN, RSV and opcode bits, the mask bit, the length in
    /// its shortest form, the mask key if any), then its payload as it stands (masked when it came masked). A payload
    /// up to ``inlinePayload`` bytes is copied after the header; a larger one is the second buffer, as it is. `nil`
    /// for a frame with extension data (no extension is negotiated; NIO's encoder writes such a frame).
    static func asItCame(_ frame: WebSocketFrame, allocator: ByteBufferAllocator) -> (ByteBuffer, ByteBuffer?)? {
        guard frame.extensionData == nil else { return nil }
        var payload = frame.data
        let length = payload.readableBytes
        let inline = length <= inlinePayload
        var buffer = allocator.buffer(capacity: 14 + (inline ? length : 0))
        var first = frame.opcode.rawFrameBits
        if frame.fin { first |= 0x80 }
        if frame.rsv1 { first |= 0x40 }
        if frame.rsv2 { first |= 0x20 }
        if frame.rsv3 { first |= 0x10 }
        buffer.writeInteger(first)
        let mask: UInt8 = frame.maskKey == nil ? 0 : 0x80
        if length <= 125 {
            buffer.writeInteger(mask | UInt8(length))
        } else if length <= Int(UInt16.max) {
            buffer.writeInteger(mask | 126)
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(mask | 127)
            buffer.writeInteger(UInt64(length))
        }
        if let key = frame.maskKey { buffer.writeBytes(key) }
        guard inline else { return (buffer, payload) }
        buffer.writeBuffer(&payload)
        return (buffer, nil)
    }
}

extension WebSocketOpcode {
    /// The opcode's four bits as they stand in a frame's first byte.
    fileprivate var rawFrameBits: UInt8 { UInt8(webSocketOpcode: self) & 0x0F }
}
