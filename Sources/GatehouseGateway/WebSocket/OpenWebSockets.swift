import NIOWebSocket
public import ServiceLifecycle
import Synchronization

/// The WebSockets the gateway relays now, so that a graceful shutdown can close each with 1001 "going away"
/// (RFC 6455 §7.4.1) — telling clients to reconnect elsewhere — before the server stops.
final class OpenWebSockets: Sendable {
    /// Closes one WebSocket with a code and a reason.
    typealias Closer = @Sendable (WebSocketErrorCode, String) async -> Void
    private let open = Mutex<(next: Int, closers: [Int: Closer])>((0, [:]))

    /// Remembers how to close a WebSocket until ``remove(_:)``; returns its key.
    func add(_ closer: @escaping Closer) -> Int {
        open.withLock { state in
            state.next += 1
            state.closers[state.next] = closer
            return state.next
        }
    }

    func remove(_ key: Int) { _ = open.withLock { $0.closers.removeValue(forKey: key) } }

    var count: Int { open.withLock { $0.closers.count } }

    /// Closes every open WebSocket with `code` (their relays then close the upstream side).
    func closeAll(_ code: WebSocketErrorCode, reason: String) async {
        let closers = open.withLock { Array($0.closers.values) }
        await withTaskGroup(of: Void.self) { group in
            for closer in closers { group.addTask { await closer(code, reason) } }
        }
    }
}

/// A service that, on graceful shutdown (SIGTERM), closes the gateway's WebSockets with 1001 "going away". Run it
/// after the gateway's application in one `ServiceGroup`: a group shuts its services down last first, so the
/// WebSockets are closed with 1001 before the server's own shutdown would close them with 1000.
public struct WebSocketDrain: Service {
    let webSockets: OpenWebSockets

    public func run() async throws {
        try? await gracefulShutdown()
        await webSockets.closeAll(.goingAway, reason: "gateway shutting down")
    }
}

extension Gateway {
    /// The service that closes this gateway's WebSockets with 1001 on graceful shutdown (see ``WebSocketDrain``).
    public var webSocketDrain: WebSocketDrain { WebSocketDrain(webSockets: openWebSockets) }
}
