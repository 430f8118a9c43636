import NIOCore
import NIOWebSocket

/// Joins a message's data frames (a text or binary frame, then continuation frames up to the one with FIN), checks
/// its size and, for text, its UTF-8 (RFC 6455 §5.4, §5.6, §8.1). Control frames never come here.
struct GatewayWebSocketMessageAssembler {
    /// What a frame made of the message so far.
    enum Outcome: Equatable {
        /// More frames to come.
        case incomplete
        /// The message is whole.
        case message(GatewayWebSocketMessage)
        /// The frame breaks the protocol (or the limit): the connection is closed with this frame.
        case violation(GatewayWebSocketCloseFrame)
    }

    /// The largest message, its fragments joined.
    let maxMessageSize: Int
    /// The message being joined: its first frame's opcode and the bytes so far.
    private var pending: (opcode: WebSocketOpcode, bytes: ByteBuffer)?

    init(maxMessageSize: Int) {
        self.maxMessageSize = maxMessageSize
    }

    /// Adds a data frame (`text`, `binary` or `continuation`), unmasked.
    mutating func append(_ frame: WebSocketFrame) -> Outcome {
        var data = frame.unmaskedData
        switch (frame.opcode, pending) {
        case (.text, nil), (.binary, nil):
            guard data.readableBytes <= maxMessageSize else { return .violation(Self.tooBig) }
            if frame.fin { return Self.message(frame.opcode, data) }
            pending = (frame.opcode, data)
            return .incomplete
        case (.continuation, .some(var joined)):
            guard joined.bytes.readableBytes + data.readableBytes <= maxMessageSize else {
                pending = nil
                return .violation(Self.tooBig)
            }
            pending = nil  // no second reference while the bytes grow
            joined.bytes.writeBuffer(&data)
            if frame.fin { return Self.message(joined.opcode, joined.bytes) }
            pending = joined
            return .incomplete
        case (.continuation, nil):
            return .violation(GatewayWebSocketCloseFrame(closeCode: .protocolError, reason: "a continuation frame without a message"))
        default:
            return .violation(GatewayWebSocketCloseFrame(closeCode: .protocolError, reason: "a new message inside a fragmented one"))
        }
    }

    /// The close frame for a message over ``maxMessageSize``.
    static let tooBig = GatewayWebSocketCloseFrame(closeCode: .messageTooLarge, reason: "message too big")

    private static func message(_ opcode: WebSocketOpcode, _ bytes: ByteBuffer) -> Outcome {
        guard opcode == .text else { return .message(.binary(bytes)) }
        guard isValidUTF8(bytes.readableBytesView) else {
            return .violation(GatewayWebSocketCloseFrame(closeCode: .dataInconsistentWithMessage, reason: "a text message that is not UTF-8"))
        }
        return .message(.text(String(decoding: bytes.readableBytesView, as: UTF8.self)))
    }
}
