import NIOWebSocket

/// What a ``WebSocketBridge`` writes to and holds on one side: a socket's ``WebSocketSideHandler``, or for a client
/// on KAAZING's emulated transport an ``EmulatedWebSocket`` (its frames carried by HTTP requests and responses).
/// The bridge calls it on its event loop.
protocol WebSocketBridgeSide: AnyObject {
    /// Whether the side takes more now (its socket's buffer is not full).
    var isWritable: Bool { get }
    /// Writes `frame` exactly as it was received, past any encoder; `false` when it cannot (the caller then writes
    /// it with ``write(_:)``). `thenClose`: flushed, and the side closed once it is written.
    func writeAsItCame(_ frame: WebSocketFrame, thenClose: Bool) -> Bool
    func write(_ frame: WebSocketFrame)
    func flush()
    func close()
    /// Writes `frame`, then closes the side.
    func writeAndClose(_ frame: WebSocketFrame)
    /// Stops reading the side's frames (the other side is full), and starts again.
    func pauseReads()
    func resumeReads()
}

extension WebSocketSideHandler: WebSocketBridgeSide {}
