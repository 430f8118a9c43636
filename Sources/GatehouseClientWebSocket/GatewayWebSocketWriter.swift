import NIOCore
public import NIOWebSocket

/// Sends an open WebSocket's messages and closes it (from any task). On a WebSocket connection the frames are written
/// on its event loop, masked as a client's are; on KAAZING's emulated transport
/// (``GatewayWebSocketClient/connectEmulated(url:challengeHandler:protocols:maxAttempts:configuration:logger:handler:)``)
/// each message is an upstream request, sent in the order written.
public struct GatewayWebSocketWriter: Sendable {
    /// Where the messages go.
    enum Backend: Sendable {
        /// A WebSocket connection's channel.
        case channel(any Channel)
        /// An emulated WebSocket's upstream requests.
        case emulated(EmulatedUpstream)
    }

    let backend: Backend

    init(channel: any Channel) { backend = .channel(channel) }
    init(emulated upstream: EmulatedUpstream) { backend = .emulated(upstream) }

    /// Sends `message` in one frame; returns once written, or throws when the connection is closed.
    public func write(_ message: GatewayWebSocketMessage) async throws {
        switch backend {
        case .channel(let channel): try await Self.onHandler(channel) { $0.send(message) }.get()
        case .emulated(let upstream): try await upstream.send(message)
        }
    }

    /// Sends a close frame with `code` and `reason` (cut to 123 bytes); the server's answering close frame ends the
    /// connection. Nothing happens when the connection is already closing. (KAAZING's emulated transport carries
    /// neither: the gateway tells the upstream `1000`.)
    public func close(_ code: WebSocketErrorCode = .normalClosure, reason: String? = nil) async throws {
        switch backend {
        case .channel(let channel):
            try await Self.onHandler(channel) { $0.close(GatewayWebSocketCloseFrame(closeCode: code, reason: reason)) }.get()
        case .emulated(let upstream):
            try await upstream.close()
        }
    }

    /// Sends a close frame with the status code `code` (`1000`, or `3000`–`4999` for an application's own).
    public func close(code: UInt16, reason: String? = nil) async throws {
        try await close(WebSocketErrorCode(codeNumber: Int(code)), reason: reason)
    }

    /// Ends the connection at once, without a closing handshake.
    func abort() async {
        switch backend {
        case .channel(let channel): try? await channel.close()
        case .emulated(let upstream): upstream.end()
        }
    }

    private static func onHandler(_ channel: any Channel, _ body: @escaping @Sendable (GatewayWebSocketChannelHandler) -> EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        channel.eventLoop.flatSubmit {
            guard let handler = try? channel.pipeline.syncOperations.handler(type: GatewayWebSocketChannelHandler.self) else {
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            return body(handler)
        }
    }
}
