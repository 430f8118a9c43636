import GatehouseClient
import GatehouseProtocol
import NIOHTTP1

/// The upstream side of a WebSocket on KAAZING's emulated transport (``KaazingEmulation``): each message written is a
/// `POST` to the session's upstream URL whose body is the message's frame and `RECONNECT`, with the next sequence
/// number. Requests go one at a time, in the order written (the gateway refuses one out of sequence); a close is
/// `CLOSE` then `RECONNECT`, after which nothing more is sent.
final class EmulatedUpstream: Sendable {
    private struct State {
        /// The sequence number of the last request (the create's at first).
        var sequence: UInt64
        /// The request sent last, which the next waits for.
        var last: Task<Void, any Error>?
        /// `CLOSE` was written, or the session ended: nothing more is sent.
        var closed = false
    }

    private let url: GatewayWebSocketURL
    private let configuration: GatewayWebSocketConfiguration
    private let state: Locked<State>

    /// The upstream at `url` (its target the session's upstream path), whose first request follows `sequence`.
    init(url: GatewayWebSocketURL, sequence: UInt64, configuration: GatewayWebSocketConfiguration) {
        self.url = url
        self.configuration = configuration
        state = Locked(State(sequence: sequence))
    }

    /// Sends `message`; returns once the gateway took it.
    func send(_ message: GatewayWebSocketMessage) async throws {
        let frame: KaazingEmulation.Frame
        switch message {
        case .text(let text): frame = .text(Array(text.utf8))
        case .binary(let buffer): frame = .binary(Array(buffer.readableBytesView))
        }
        guard let sent = enqueue([frame], closing: false) else {
            throw GatewayClientError.transport("the emulated WebSocket is closed")
        }
        try await sent.value
    }

    /// Sends `CLOSE`, once; later calls do nothing.
    func close() async throws {
        try await enqueue([.command(.close)], closing: true)?.value
    }

    /// Sends nothing more (the session ended).
    func end() {
        state.withLock { $0.closed = true }
    }

    /// The request carrying `frames` then `RECONNECT`, sent after the one before it; `nil` once closed.
    private func enqueue(_ frames: [KaazingEmulation.Frame], closing: Bool) -> Task<Void, any Error>? {
        var bytes: [UInt8] = []
        for frame in frames { KaazingEmulation.encode(frame, into: &bytes) }
        KaazingEmulation.encode(.command(.reconnect), into: &bytes)
        let body = bytes
        let url = url
        let configuration = configuration
        return state.withLock { state -> Task<Void, any Error>? in
            guard !state.closed else { return nil }
            if closing { state.closed = true }
            state.sequence += 1
            let sequence: UInt64 = state.sequence
            let previous: Task<Void, any Error>? = state.last
            let request = Task { [previous, body, url, configuration, sequence] in
                // In order: a failed request before this one fails this one too (the gateway ended the session).
                try await previous?.value
                let response = try await OneShotHTTPRequest.send(
                    .POST, url: url,
                    headers: [("X-Sequence-No", String(sequence)), ("Content-Type", KaazingEmulation.binaryDownstreamContentType)],
                    body: body, configuration: configuration
                )
                guard response.head.status.code == 200 else {
                    throw GatewayClientError.transport("the gateway refused an emulated WebSocket's message with \(response.head.status.code)")
                }
            }
            state.last = request
            return request
        }
    }
}
