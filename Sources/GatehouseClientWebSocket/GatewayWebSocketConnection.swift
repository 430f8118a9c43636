import NIOCore

/// An open WebSocket: the server's messages, the writer, the sub-protocol the server selected, and its end.
public struct GatewayWebSocketConnection: Sendable {
    /// The server's messages, whole; they end when the connection closes (with an error when it broke the protocol).
    public let messages: AsyncThrowingStream<GatewayWebSocketMessage, any Error>
    /// Sends messages and closes.
    public let outbound: GatewayWebSocketWriter
    /// The sub-protocol the server selected, if any.
    public let selectedProtocol: String?
    /// The server's close frame once the connection is closed (`nil` when it ended without one).
    let closed: EventLoopFuture<GatewayWebSocketCloseFrame?>

    /// Runs `handler` with the messages and the writer; when it returns (or throws) the connection is closed with
    /// `1000`. Returns the server's close frame, if any; rethrows the handler's error.
    public func run(
        _ handler: @Sendable (_ messages: AsyncThrowingStream<GatewayWebSocketMessage, any Error>, _ outbound: GatewayWebSocketWriter) async throws -> Void
    ) async throws -> GatewayWebSocketCloseFrame? {
        do {
            try await handler(messages, outbound)
        } catch {
            try? await outbound.close(.normalClosure)
            _ = try? await closed.get()
            throw error
        }
        try? await outbound.close(.normalClosure)
        return try await closed.get()
    }

    /// Closes the connection at once, without the closing handshake.
    public func abort() async {
        await outbound.abort()
    }
}
