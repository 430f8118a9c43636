import HTTPTypes
import NIOCore

/// A `serve` connection on the project's own front (``RouterChannelHandler``): a request collected whole, answered by
/// the router on a task, then the next one (NIO's pipelining handler holds a pipelined request back until the answer
/// before it has ended). Events in, actions out, no socket: tested alone (`RouterConnectionStateMachineTests`).
///
/// ```
///  idle ──head──▶ receiving(head, body) ──end──▶ responding(closeAfter) ──answer's end──▶ idle
///    │                 │ body over the limit: 413 and close         │ Connection: close, quiescing, input closed
///    └─ quiesce, input closed, idle timeout, error ──▶ closed ◀──────┘
/// ```
///
/// An HTTP/2 stream (``isStream``) carries one request: its answer's end ends it (NIOHTTP2 closes the stream once both
/// sides have ended), and neither graceful shutdown nor `Connection` closes it — closing a stream whose answer is
/// still queued behind flow control would reset it and lose the answer's end. The connection's graceful shutdown is
/// NIOHTTP2's (GOAWAY, the streams finished, then closed).
struct RouterConnectionStateMachine {
    enum State {
        /// Between requests.
        case idle
        /// A request's head arrived; its body is collected (``maxBody`` at most).
        case receiving(HTTPRequest, ByteBuffer)
        /// The router answers a request (`closeAfter`: the connection closes when the answer has ended).
        case responding(closeAfter: Bool)
        /// Nothing more is read or answered.
        case closed
    }

    /// What the handler does.
    enum Action {
        case none
        /// Answer the request (head and whole body) through the router.
        case respond(HTTPRequest, ByteBuffer)
        /// Refuse the request: its body is over the limit (`413`), then close.
        case refuseTooLarge
        /// Close the connection.
        case close
    }

    private(set) var state = State.idle
    /// Graceful shutdown was asked for: the answer under way is the last.
    private(set) var quiescing = false
    /// The largest request body collected.
    let maxBody: Int
    /// An HTTP/2 stream rather than an HTTP/1.x connection.
    let isStream: Bool

    init(maxBody: Int, isStream: Bool = false) {
        self.maxBody = maxBody
        self.isStream = isStream
    }

    /// A request's head arrived.
    mutating func head(_ head: HTTPRequest, allocator: ByteBufferAllocator) -> Action {
        guard case .idle = state else { return .none }
        state = .receiving(head, allocator.buffer(capacity: 0))
        return .none
    }

    /// A piece of its body arrived.
    mutating func body(_ part: ByteBuffer) -> Action {
        guard case .receiving(let head, var body) = state else { return .none }
        guard body.readableBytes + part.readableBytes <= maxBody else {
            state = .closed
            return .refuseTooLarge
        }
        state = .idle  // the buffer uniquely referenced while it grows
        body.writeImmutableBuffer(part)
        state = .receiving(head, body)
        return .none
    }

    /// The request ended: the router answers it.
    mutating func end() -> Action {
        guard case .receiving(let head, let body) = state else { return .none }
        state = .responding(closeAfter: quiescing || Self.asksClose(head))
        return .respond(head, body)
    }

    /// The answer was written whole.
    mutating func answerEnded() -> Action {
        guard case .responding(let closeAfter) = state else { return .none }
        if isStream {
            state = .closed
            return .none
        }
        if closeAfter || quiescing {
            state = .closed
            return .close
        }
        state = .idle
        return .none
    }

    /// Graceful shutdown: an idle connection closes now, a busy one after its answer.
    mutating func quiesce() -> Action {
        if isStream { return .none }
        quiescing = true
        switch state {
        case .idle:
            state = .closed
            return .close
        case .receiving, .responding, .closed:
            return .none
        }
    }

    /// The client sent its last byte: an answer under way is still written, then the connection closes.
    mutating func inputClosed() -> Action {
        switch state {
        case .responding:
            state = .responding(closeAfter: true)
            return .none
        case .idle, .receiving:
            state = .closed
            return .close
        case .closed:
            return .none
        }
    }

    /// Nothing was read for the idle timeout: an idle connection closes (a request being answered is the router's).
    mutating func idleTimedOut() -> Action {
        switch state {
        case .idle, .receiving:
            state = .closed
            return .close
        case .responding, .closed:
            return .none
        }
    }

    /// The connection failed or closed.
    mutating func failed() -> Action {
        if case .closed = state { return .none }
        state = .closed
        return .close
    }

    /// Whether the request asks the connection to close after its answer.
    static func asksClose(_ head: HTTPRequest) -> Bool {
        guard let connection = head.headerFields[.connection] else { return false }
        return connection.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "close" }
    }
}
