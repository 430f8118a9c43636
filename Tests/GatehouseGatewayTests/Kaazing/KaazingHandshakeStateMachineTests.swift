@testable import GatehouseGateway
import GatehouseProtocol
import NIOWebSocket
import Testing

/// KAAZING's extended handshake: the message format and the gateway's state machine alone, with no socket.
@Suite(.timeLimit(.minutes(3))) struct KaazingHandshakeStateMachineTests {
    /// What KAAZING's JavaScript client 4.0 sends first (`should.negotiate.extensions.in.wrapped.request.rpt`).
    static let javaScriptRequest = Array("GET /echo HTTP/1.1\r\nWebSocket-Protocol: \r\nSec-WebSocket-Protocol: \r\nSec-WebSocket-Extensions: x-kaazing-idle-timeout,x-kaazing-ping-pong\r\n\r\n".utf8)

    @Test func theJavaScriptClientsRequestIsRead() throws {
        let request = try KaazingHandshake.Request(parsing: Self.javaScriptRequest)
        #expect(request.method == "GET")
        #expect(request.target == "/echo")
        #expect(request.value(of: "sec-websocket-protocol") == "")
        #expect(request.value(of: "SEC-WEBSOCKET-EXTENSIONS") == "x-kaazing-idle-timeout,x-kaazing-ping-pong")
        #expect(request.value(of: "authorization") == nil)
        #expect(try KaazingHandshake.Request(parsing: request.encoded) == request)
    }

    @Test(arguments: [
        "GET /echo HTTP/1.1\n\n",                              // bare LF
        "GET /echo HTTP/1.0\r\n\r\n",                          // not 1.1
        "GET echo HTTP/1.1\r\n\r\n",                           // not a path
        "GET /echo HTTP/1.1\r\nAuthorization\r\n\r\n",         // no colon
        "GET /echo HTTP/1.1\r\nBad Name: x\r\n\r\n",           // not a token
        "GET /echo HTTP/1.1\r\nX: a\u{7}b\r\n\r\n",            // a control character
        "GET /echo HTTP/1.1\r\n\r\nbody\r\n\r\n",              // anything after the head
        "GET /echo HTTP/1.1\r\n",                              // no end
    ])
    func aMalformedRequestIsRefused(text: String) {
        #expect(throws: KaazingHandshake.FormatError.self) { try KaazingHandshake.Request(parsing: Array(text.utf8)) }
    }

    @Test func anAnswerIsWrittenAsKaazingWritesItAndReadBack() throws {
        let answer = KaazingHandshake.Response(status: 401, reason: "Unauthorized", fields: [("WWW-Authenticate", "Application Basic realm=\"demo\"")],
                                               body: Array("{}".utf8))
        #expect(String(decoding: answer.encoded, as: UTF8.self)
                == "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Application Basic realm=\"demo\"\r\nContent-Length: 2\r\n\r\n{}")
        let read = try KaazingHandshake.Response(parsing: answer.encoded)
        #expect(read.status == 401)
        #expect(read.value(of: "www-authenticate") == "Application Basic realm=\"demo\"")
        #expect(read.body == Array("{}".utf8))
    }

    @Test func theSubProtocolIsFoundInAnyOfTheFields() {
        #expect(KaazingHandshake.isRequested(byProtocolFields: ["x-kaazing-handshake"]))
        #expect(KaazingHandshake.isRequested(byProtocolFields: ["chat", "x-kaazing-handshake, chat"]))
        #expect(!KaazingHandshake.isRequested(byProtocolFields: ["chat, x-kaazing-handshake-not"]))
        #expect(!KaazingHandshake.isRequested(byProtocolFields: []))
    }

    // MARK: The machine

    static func request(_ fields: String = "") -> [UInt8] { Array("GET /echo HTTP/1.1\r\n\(fields)\r\n".utf8) }

    @Test func aRequestInFragmentsIsDecidedOnceWhole() {
        var machine = KaazingHandshakeStateMachine(path: "/echo")
        let bytes = Self.request("Authorization: Basic am9lOndlbGNvbWU=\r\n")
        guard case .none = machine.frame(opcode: .text, fin: false, payload: Array(bytes[..<10])) else { Issue.record("decided on a fragment"); return }
        guard case .pong(let payload) = machine.frame(opcode: .ping, fin: true, payload: [7]) else { Issue.record("no pong"); return }
        #expect(payload == [7])
        guard case .decide(let request) = machine.frame(opcode: .continuation, fin: true, payload: Array(bytes[10...])) else {
            Issue.record("not decided")
            return
        }
        #expect(request.value(of: "Authorization") == "Basic am9lOndlbGNvbWU=")
        #expect(machine.state == .deciding)
        #expect(machine.attempts == 1)
    }

    @Test func aChallengeIsAnsweredAndTheNextRequestReadUntilTheLimit() {
        var machine = KaazingHandshakeStateMachine(path: "/echo", maximumAttempts: 3)
        let challenge = Gateway.Admission.answer(GatewayAnswer.unauthorized(challenge: "Basic realm=\"demo\""))
        for attempt in 1...2 {
            guard case .decide = machine.frame(opcode: .binary, fin: true, payload: Self.request()) else { Issue.record("no decision"); return }
            guard case .answer(let answer) = machine.decided(challenge) else { Issue.record("attempt \(attempt) not answered"); return }
            #expect(answer.status == 401)
            #expect(answer.value(of: "WWW-Authenticate") == "Basic realm=\"demo\"")
            #expect(machine.state == .reading(message: [], inMessage: false))
        }
        guard case .decide = machine.frame(opcode: .text, fin: true, payload: Self.request()) else { Issue.record("no decision"); return }
        guard case .answerAndClose(let refusal, let code) = machine.decided(challenge) else { Issue.record("the last attempt was not refused"); return }
        #expect(refusal.status == 403)
        #expect(code == .policyViolation)
        #expect(machine.state == .closed)
    }

    @Test func anAllowRelaysAndAForbiddenCloses() {
        var machine = KaazingHandshakeStateMachine(path: "/echo")
        _ = machine.frame(opcode: .text, fin: true, payload: Self.request())
        guard case .relay(let subject) = machine.decided(.allow(Subject(name: "joe"))) else { Issue.record("not relayed"); return }
        #expect(subject?.name == "joe")
        #expect(machine.state == .admitted)

        var refused = KaazingHandshakeStateMachine(path: "/echo")
        _ = refused.frame(opcode: .text, fin: true, payload: Self.request())
        guard case .answerAndClose(let answer, .policyViolation) = refused.decided(.answer(.forbidden)) else { Issue.record("not refused"); return }
        #expect(answer.status == 403)
    }

    @Test func whatIsNotARequestForThePathClosesTheConnection() {
        func closing(_ frames: [(WebSocketOpcode, Bool, [UInt8])]) -> KaazingHandshakeStateMachine.Action? {
            var machine = KaazingHandshakeStateMachine(path: "/echo")
            var last: KaazingHandshakeStateMachine.Action?
            for (opcode, fin, payload) in frames { last = machine.frame(opcode: opcode, fin: fin, payload: payload) }
            #expect(machine.state == .closed)
            return last
        }
        guard case .answerAndClose(let other, _) = closing([(.text, true, Array("GET /other HTTP/1.1\r\n\r\n".utf8))]) else { Issue.record("another path"); return }
        #expect(other.status == 400)
        guard case .answerAndClose(let post, _) = closing([(.text, true, Array("POST /echo HTTP/1.1\r\n\r\n".utf8))]) else { Issue.record("a POST"); return }
        #expect(post.status == 405)
        guard case .answerAndClose(let garbage, _) = closing([(.text, true, Array("hello".utf8))]) else { Issue.record("garbage"); return }
        #expect(garbage.status == 400)
        guard case .close(.protocolError, _) = closing([(.continuation, true, [1])]) else { Issue.record("a stray continuation"); return }
        guard case .close(.protocolError, _) = closing([(.text, false, [1]), (.text, true, [2])]) else { Issue.record("a message in a message"); return }
        guard case .close(.messageTooLarge, _) = closing([(.text, false, [UInt8](repeating: 65, count: KaazingHandshake.maximumSize)), (.continuation, true, [65])]) else {
            Issue.record("too large")
            return
        }
        guard case .close(.normalClosure, _) = closing([(.connectionClose, true, [])]) else { Issue.record("a close"); return }
    }

    @Test func aTimeoutClosesOnlyWhileReading() {
        var machine = KaazingHandshakeStateMachine(path: "/echo")
        _ = machine.frame(opcode: .text, fin: true, payload: Self.request())
        guard case .none = machine.timedOut() else { Issue.record("a decision in progress was cut"); return }
        guard case .answer = machine.decided(.answer(GatewayAnswer.unauthorized(challenge: "Basic realm=\"r\""))) else { Issue.record("no answer"); return }
        guard case .close(.policyViolation, let reason) = machine.timedOut() else { Issue.record("no close"); return }
        #expect(reason == "the handshake timed out")
    }

    @Test func aShutdownClosesAHandshakeStillReadingOnly() {
        var reading = KaazingHandshakeStateMachine(path: "/echo")
        guard case .close(.goingAway, _) = reading.shuttingDown() else { Issue.record("not closed"); return }
        var deciding = KaazingHandshakeStateMachine(path: "/echo")
        _ = deciding.frame(opcode: .text, fin: true, payload: Self.request())
        guard case .none = deciding.shuttingDown() else { Issue.record("a decision in progress was cut"); return }
        guard case .relay = deciding.decided(.allow(nil)) else { Issue.record("not relayed"); return }
    }

    @Test func theInnerOpeningCarriesTheSelectedProtocolAndNoExtension() {
        let opening = KaazingHandshakeStateMachine.opening(key: "dGhlIHNhbXBsZSBub25jZQ==", selectedProtocol: "chat", successChallenge: nil)
        #expect(opening.status == 101)
        #expect(opening.reason == "Web Socket Protocol Handshake")
        #expect(opening.value(of: "Sec-WebSocket-Accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")  // RFC 6455 §1.3's example
        #expect(opening.value(of: "Sec-WebSocket-Protocol") == "chat")
        #expect(opening.value(of: "Sec-WebSocket-Extensions") == nil)
    }
}
