import HTTPTypes
import NIOCore
@testable import GatehouseServer
import Testing

/// A `serve` connection on the own front, alone: requests collected whole and answered one at a time, the body's
/// bound, `Connection: close`, graceful shutdown, the client's end of input and the idle timeout, state by state. The
/// same over real connections: ServeFrontTests.
@Suite(.timeLimit(.minutes(1))) struct RouterConnectionStateMachineTests {
    static let allocator = ByteBufferAllocator()

    static func request(_ path: String = "/health", fields: HTTPFields = [:]) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: nil, authority: "127.0.0.1", path: path, headerFields: fields)
    }

    /// Whether `action` answers `head` with `body`.
    static func responds(_ action: RouterConnectionStateMachine.Action, _ path: String, body: String = "") -> Bool {
        guard case .respond(let head, let collected) = action else { return false }
        return head.path == path && collected == ByteBuffer(string: body)
    }

    static func closes(_ action: RouterConnectionStateMachine.Action) -> Bool {
        if case .close = action { true } else { false }
    }

    static func nothing(_ action: RouterConnectionStateMachine.Action) -> Bool {
        if case .none = action { true } else { false }
    }

    @Test func aRequestIsCollectedWholeThenAnsweredAndTheNextOneFollows() {
        var machine = RouterConnectionStateMachine(maxBody: 16)
        #expect(Self.nothing(machine.head(Self.request("/a"), allocator: Self.allocator)))
        #expect(Self.nothing(machine.body(ByteBuffer(string: "ab"))))
        #expect(Self.nothing(machine.body(ByteBuffer(string: "cd"))))
        #expect(Self.responds(machine.end(), "/a", body: "abcd"))
        // While it is answered, nothing else starts (NIO's pipelining handler holds the next request back).
        #expect(Self.nothing(machine.head(Self.request("/b"), allocator: Self.allocator)))
        #expect(Self.nothing(machine.end()))
        #expect(Self.nothing(machine.answerEnded()), "kept alive")
        #expect(Self.nothing(machine.head(Self.request("/b"), allocator: Self.allocator)))
        #expect(Self.responds(machine.end(), "/b"))
    }

    @Test func aBodyOverTheBoundIsRefusedAndTheConnectionEnds() {
        var machine = RouterConnectionStateMachine(maxBody: 4)
        _ = machine.head(Self.request(), allocator: Self.allocator)
        #expect(Self.nothing(machine.body(ByteBuffer(string: "1234"))), "at the bound")
        guard case .refuseTooLarge = machine.body(ByteBuffer(string: "5")) else {
            Issue.record("over the bound, not refused")
            return
        }
        #expect(Self.nothing(machine.end()), "nothing more is answered")
    }

    @Test(arguments: ["close", "keep-alive, close", "Close"])
    func connectionCloseEndsTheConnectionAfterItsAnswer(value: String) {
        var machine = RouterConnectionStateMachine(maxBody: 4)
        _ = machine.head(Self.request(fields: [.connection: value]), allocator: Self.allocator)
        #expect(Self.responds(machine.end(), "/health"))
        #expect(Self.closes(machine.answerEnded()))
    }

    @Test func gracefulShutdownClosesAnIdleConnectionNowAndABusyOneAfterItsAnswer() {
        var idle = RouterConnectionStateMachine(maxBody: 4)
        #expect(Self.closes(idle.quiesce()))
        var busy = RouterConnectionStateMachine(maxBody: 4)
        _ = busy.head(Self.request(), allocator: Self.allocator)
        _ = busy.end()
        #expect(Self.nothing(busy.quiesce()))
        #expect(Self.closes(busy.answerEnded()))
        // A request whose head came before the shutdown and whose end after it is answered, and the last.
        var receiving = RouterConnectionStateMachine(maxBody: 4)
        _ = receiving.head(Self.request(), allocator: Self.allocator)
        #expect(Self.nothing(receiving.quiesce()))
        #expect(Self.responds(receiving.end(), "/health"))
        #expect(Self.closes(receiving.answerEnded()))
    }

    @Test func theClientsEndOfInputAndTheIdleTimeout() {
        var idle = RouterConnectionStateMachine(maxBody: 4)
        #expect(Self.closes(idle.inputClosed()))
        var answering = RouterConnectionStateMachine(maxBody: 4)
        _ = answering.head(Self.request(), allocator: Self.allocator)
        _ = answering.end()
        #expect(Self.nothing(answering.inputClosed()), "the answer is still written")
        #expect(Self.nothing(answering.idleTimedOut()), "a request being answered is the router's")
        #expect(Self.closes(answering.answerEnded()))
        var stalled = RouterConnectionStateMachine(maxBody: 4)
        _ = stalled.head(Self.request(), allocator: Self.allocator)
        #expect(Self.closes(stalled.idleTimedOut()))
        #expect(Self.nothing(stalled.failed()), "closed once")
    }

    /// An HTTP/2 stream: one request; its answer's end ends it without a close (NIOHTTP2 closes it when both sides have
    /// ended: a close would reset an answer still queued behind flow control), and graceful shutdown leaves it to finish.
    @Test func anHTTP2StreamEndsWithItsAnswerAndIsNeverClosedByShutdownOrConnectionClose() {
        var stream = RouterConnectionStateMachine(maxBody: 4, isStream: true)
        #expect(Self.nothing(stream.head(Self.request(fields: [.connection: "close"]), allocator: Self.allocator)))
        #expect(Self.nothing(stream.quiesce()))
        #expect(Self.responds(stream.end(), "/health"))
        #expect(Self.nothing(stream.quiesce()))
        #expect(Self.nothing(stream.answerEnded()))
        guard case .closed = stream.state else { Issue.record("a stream after its answer: \(stream.state)"); return }
        #expect(Self.nothing(stream.head(Self.request(), allocator: Self.allocator)))
        var idle = RouterConnectionStateMachine(maxBody: 4, isStream: true)
        #expect(Self.nothing(idle.quiesce()))
        #expect(Self.closes(idle.failed()))
    }
}
