public import NIOCore
public import NIOWebSocket

/// Sends an open WebSocket's messages and closes it (from any task; the frames are written on the connection's
/// event loop, masked as a client's are).
public struct GatewayWebSocketWriter: Sendable {
    let channel: any Channel

    /// Sends `message` in one frame; returns once written, or throws when the connection is closed.
    public func write(_ message: GatewayWebSocketMessage) async throws {
        try await onHandler { $0.send(message) }.get()
    }

    /// Sends a close frame with `code` and `reason` (cut to 123 bytes); the server's answering close frame ends the
    /// connection. Nothing happens when the connection is already closing.
    public func close(_ code: WebSocketErrorCode = .normalClosure, reason: String? = nil) async throws {
        try await onHandler { $0.close(GatewayWebSocketCloseFrame(closeCode: code, reason: reason)) }.get()
    }

    /// Sends a close frame with the status code `code` (`1000`, or `3000`–`4999` for an application's own).
    public func close(code: UInt16, reason: String? = nil) async throws {
        try await close(WebSocketErrorCode(codeNumber: Int(code)), reason: reason)
    }

    private func onHandler(_ body: @escaping @Sendable (GatewayWebSocketChannelHandler) -> EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        let channel = channel
        return channel.eventLoop.flatSubmit {
            guard let handler = try? channel.pipeline.syncOperations.handler(type: GatewayWebSocketChannelHandler.self) else {
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            return body(handler)
        }
    }
}
