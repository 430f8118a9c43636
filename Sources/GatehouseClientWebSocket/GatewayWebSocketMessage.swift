public import NIOCore
public import NIOWebSocket

/// A whole WebSocket message, as the application sends and receives it: its fragments joined, the control frames
/// (ping, pong, close) answered by the client and never shown.
public enum GatewayWebSocketMessage: Sendable, Equatable {
    /// A text message (its bytes checked to be UTF-8).
    case text(String)
    /// A binary message.
    case binary(ByteBuffer)

    /// A binary message with `bytes` (for code that does not use SwiftNIO's types).
    public static func binary(bytes: some Sequence<UInt8>) -> GatewayWebSocketMessage {
        .binary(ByteBuffer(bytes: Array(bytes)))
    }

    /// A binary message's bytes; `nil` for a text message.
    public var binaryBytes: [UInt8]? {
        guard case .binary(let buffer) = self else { return nil }
        return Array(buffer.readableBytesView)
    }
}

/// The close frame a WebSocket ended with: its status code and reason (RFC 6455 §5.5.1).
public struct GatewayWebSocketCloseFrame: Sendable, Equatable {
    /// The status code (`1005`, `.unknown(1005)`, when the frame carried none).
    public var closeCode: WebSocketErrorCode
    /// The reason, when the frame carried one.
    public var reason: String?

    /// A close frame with `closeCode` and `reason`.
    public init(closeCode: WebSocketErrorCode, reason: String? = nil) {
        self.closeCode = closeCode
        self.reason = reason
    }

    /// The status code as a number (`1000`, `1008`, ...).
    public var code: UInt16 { UInt16(webSocketErrorCode: closeCode) }

    /// RFC 6455's "no status received" (`1005`): a close frame without a body. Never sent.
    static let noStatus = GatewayWebSocketCloseFrame(closeCode: .unknown(1005))

    /// Reads a close frame's payload: an optional status code and a UTF-8 reason; `nil` for a malformed one (a single
    /// byte, a code a peer may not send, a reason that is not UTF-8), which RFC 6455 answers with `1002`.
    init?(payload: ByteBuffer) {
        var payload = payload
        guard payload.readableBytes > 0 else { self = .noStatus; return }
        guard let code = payload.readInteger(as: UInt16.self) else { return nil }
        guard Self.mayBeSent(code) else { return nil }
        let reasonBytes = payload.readableBytesView
        guard isValidUTF8(reasonBytes) else { return nil }
        self.init(closeCode: WebSocketErrorCode(codeNumber: Int(code)), reason: reasonBytes.isEmpty ? nil : String(decoding: reasonBytes, as: UTF8.self))
    }

    /// Whether `code` may travel in a close frame (RFC 6455 §7.4: 1000–1003, 1007–1011, 3000–4999; not 1004–1006, 1015).
    static func mayBeSent(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014: true
        case 3000...4999: true
        default: false
        }
    }

    /// The payload this frame is sent with: the code, then the reason cut to fit a control frame (125 bytes).
    func payload(allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 2 + (reason?.utf8.count ?? 0))
        buffer.write(webSocketErrorCode: closeCode)
        if let reason {
            var cut = Array(reason.utf8.prefix(123))
            while !cut.isEmpty && !isValidUTF8(cut) { cut.removeLast() }  // never half a character
            buffer.writeBytes(cut)
        }
        return buffer
    }
}

/// Whether `bytes` are well-formed UTF-8 (with what iOS 16 has: the standard library's transcoder, stopping on the
/// first error).
func isValidUTF8<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
    let hadError = transcode(bytes.makeIterator(), from: UTF8.self, to: UTF32.self, stoppingOnError: true) { _ in }
    return !hadError
}
