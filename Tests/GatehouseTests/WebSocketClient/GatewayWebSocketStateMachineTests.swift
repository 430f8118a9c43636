@testable import GatehouseClientWebSocket
import GatehouseClient
import NIOCore
import NIOHTTP1
import NIOWebSocket
import Testing

/// The WebSocket client's connection logic without a socket: each event's action, as the channel handler runs them.
@Suite(.timeLimit(.minutes(1))) struct GatewayWebSocketStateMachineTests {
    typealias Machine = GatewayWebSocketStateMachine

    static func open(protocols: [String] = [], maxMessageSize: Int = 1 << 16) -> Machine {
        var machine = Machine(maxMessageSize: maxMessageSize, offeredProtocols: protocols)
        guard case .sendUpgradeRequest = machine.channelActive() else { Issue.record("no upgrade request"); return machine }
        guard case .reportOpen = machine.upgraded(HTTPResponseHead(version: .http1_1, status: .switchingProtocols)) else {
            Issue.record("not opened")
            return machine
        }
        return machine
    }

    static func frame(_ opcode: WebSocketOpcode, _ text: String, fin: Bool = true, masked: Bool = false) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: opcode, maskKey: masked ? .random() : nil, data: ByteBuffer(string: text))
    }

    static func closeFrame(_ code: UInt16, _ reason: String = "") -> WebSocketFrame {
        var payload = ByteBuffer()
        payload.writeInteger(code)
        payload.writeString(reason)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)
    }

    @Test func aRefusedUpgradeReportsItsStatusChallengeAndBody() {
        var machine = Machine(maxMessageSize: 100, offeredProtocols: [])
        guard case .sendUpgradeRequest = machine.channelActive() else { Issue.record("no request"); return }
        var head = HTTPResponseHead(version: .http1_1, status: .unauthorized)
        head.headers.add(name: "WWW-Authenticate", value: "Basic realm=\"demo\"")
        guard case .none = machine.responsePart(.head(head)) else { Issue.record("reported before the body"); return }
        guard case .none = machine.responsePart(.body(ByteBuffer(string: "{\"error\":\"unauthorized\"}"))) else { Issue.record("body"); return }
        guard case .reportRefusal(let refusal) = machine.responsePart(.end(nil)) else { Issue.record("no refusal"); return }
        #expect(refusal.status == 401)
        #expect(refusal.challenge == "Basic realm=\"demo\"")
        #expect(String(decoding: refusal.body, as: UTF8.self) == "{\"error\":\"unauthorized\"}")
        // Nothing after: the channel closes.
        guard case .none = machine.channelInactive() else { Issue.record("reported twice"); return }
    }

    @Test func aSubProtocolThatWasNotOfferedFailsTheHandshake() {
        var machine = Machine(maxMessageSize: 100, offeredProtocols: ["chat"])
        _ = machine.channelActive()
        var head = HTTPResponseHead(version: .http1_1, status: .switchingProtocols)
        head.headers.add(name: "Sec-WebSocket-Protocol", value: "other")
        guard case .failHandshake = machine.upgraded(head) else { Issue.record("accepted a protocol not offered"); return }
        var offered = Machine(maxMessageSize: 100, offeredProtocols: ["chat", "other"])
        _ = offered.channelActive()
        guard case .reportOpen(let selected) = offered.upgraded(head) else { Issue.record("not opened"); return }
        #expect(selected == "other")
    }

    @Test func theHandshakeTimesOutButAnOpenConnectionDoesNot() {
        var machine = Machine(maxMessageSize: 100, offeredProtocols: [])
        _ = machine.channelActive()
        guard case .failHandshake(let error) = machine.handshakeTimedOut() else { Issue.record("no timeout"); return }
        #expect("\(error)".contains("timed out"))
        var open = Self.open()
        guard case .none = open.handshakeTimedOut() else { Issue.record("an open connection timed out"); return }
    }

    @Test func fragmentsAreJoinedAcrossAPingWhichIsAnsweredWithItsData() {
        var machine = Self.open()
        guard case .none = machine.frameReceived(Self.frame(.text, "Hel", fin: false)) else { Issue.record("first fragment"); return }
        guard case .sendFrame(.pong, let data) = machine.frameReceived(Self.frame(.ping, "are you there")) else { Issue.record("no pong"); return }
        #expect(String(buffer: data) == "are you there")
        guard case .none = machine.frameReceived(Self.frame(.continuation, "lo, ", fin: false)) else { Issue.record("second fragment"); return }
        guard case .deliver(let message) = machine.frameReceived(Self.frame(.continuation, "wörld")) else { Issue.record("not delivered"); return }
        #expect(message == .text("Hello, wörld"))
        // The next message starts afresh.
        guard case .deliver(.binary(let bytes)) = machine.frameReceived(Self.frame(.binary, "raw")) else { Issue.record("binary"); return }
        #expect(String(buffer: bytes) == "raw")
    }

    @Test func aMessageOverTheLimitClosesWith1009() {
        var machine = Self.open(maxMessageSize: 8)
        _ = machine.frameReceived(Self.frame(.binary, "12345", fin: false))
        guard case .sendClose(let close, then: .finish(let ending)) = machine.frameReceived(Self.frame(.continuation, "6789")) else {
            Issue.record("not closed")
            return
        }
        #expect(close.closeCode == .messageTooLarge)
        #expect(ending.error != nil)
        #expect(throws: GatewayClientError.self) { try machine.send(.text("too late")) }
    }

    @Test func protocolViolationsCloseWith1002Or1007() {
        let cases: [(WebSocketFrame, WebSocketErrorCode)] = [
            (Self.frame(.continuation, "orphan"), .protocolError),
            (Self.frame(.text, "masked", masked: true), .protocolError),
            (WebSocketFrame(fin: true, rsv1: true, opcode: .text, data: ByteBuffer(string: "x")), .protocolError),
            (WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: [0xC3, 0x28])), .dataInconsistentWithMessage),
            (Self.closeFrame(1005), .protocolError),  // a code a peer may not send
        ]
        for (frame, code) in cases {
            var machine = Self.open()
            guard case .sendClose(let close, then: .finish) = machine.frameReceived(frame) else { Issue.record("\(frame) not refused"); continue }
            #expect(close.closeCode == code)
        }
        // A new message inside a fragmented one.
        var machine = Self.open()
        _ = machine.frameReceived(Self.frame(.text, "a", fin: false))
        guard case .sendClose(let close, then: _) = machine.frameReceived(Self.frame(.text, "b")) else { Issue.record("not refused"); return }
        #expect(close.closeCode == .protocolError)
    }

    @Test func theServersCloseIsEchoedAndEndsTheConnection() {
        var machine = Self.open()
        guard case .sendClose(let answer, then: .finish(let ending)) = machine.frameReceived(Self.closeFrame(1008, "authorization timeout")) else {
            Issue.record("not answered")
            return
        }
        #expect(answer.closeCode == .policyViolation)
        #expect(ending.closeFrame == GatewayWebSocketCloseFrame(closeCode: .policyViolation, reason: "authorization timeout"))
        #expect(ending.error == nil)
        guard case .none = machine.channelInactive() else { Issue.record("ended twice"); return }
    }

    @Test func ourCloseWaitsForTheServersWithinTheTimeout() throws {
        var machine = Self.open()
        guard case .sendFrame(.text, _) = try machine.send(.text("bye")) else { Issue.record("not sent"); return }
        guard case .sendClose(let close, then: .awaitPeer) = machine.close(GatewayWebSocketCloseFrame(closeCode: .normalClosure, reason: "done")) else {
            Issue.record("not closing")
            return
        }
        #expect(close.reason == "done")
        // Data after our close is dropped; a second close does nothing; the server's close ends it.
        guard case .none = machine.frameReceived(Self.frame(.text, "late")) else { Issue.record("delivered after close"); return }
        guard case .none = machine.close(GatewayWebSocketCloseFrame(closeCode: .goingAway)) else { Issue.record("closed twice"); return }
        guard case .finish(let ending) = machine.frameReceived(Self.closeFrame(1000)) else { Issue.record("not finished"); return }
        #expect(ending.closeFrame?.closeCode == .normalClosure)

        var silent = Self.open()
        _ = silent.close(GatewayWebSocketCloseFrame(closeCode: .normalClosure))
        guard case .finish(let timedOut) = silent.closeTimedOut() else { Issue.record("no timeout"); return }
        #expect(timedOut.closeFrame == nil)
    }

    @Test func aDroppedConnectionEndsWithoutACloseFrame() {
        var machine = Self.open()
        guard case .finish(let ending) = machine.channelInactive() else { Issue.record("not finished"); return }
        #expect(ending.closeFrame == nil)
        var handshaking = Machine(maxMessageSize: 10, offeredProtocols: [])
        _ = handshaking.channelActive()
        guard case .failHandshake = handshaking.channelInactive() else { Issue.record("handshake not failed"); return }
    }

    @Test func aCloseFramesReasonIsCutToFitAControlFrameOnACharacterBoundary() {
        let frame = GatewayWebSocketCloseFrame(closeCode: .normalClosure, reason: String(repeating: "é", count: 100))
        let payload = frame.payload(allocator: ByteBufferAllocator())
        #expect(payload.readableBytes <= 125)
        let parsed = GatewayWebSocketCloseFrame(payload: payload)
        #expect(parsed?.reason == String(repeating: "é", count: 61))
    }

    @Test func urlsAreTakenApart() throws {
        let url = try GatewayWebSocketURL("wss://gateway.example.com/echo?room=7")
        #expect(url.secure && url.port == 443 && url.target == "/echo?room=7" && url.hostField == "gateway.example.com")
        let plain = try GatewayWebSocketURL("ws://127.0.0.1:8090")
        #expect(!plain.secure && plain.port == 8090 && plain.target == "/" && plain.hostField == "127.0.0.1:8090" && plain.hostIsAddress)
        #expect(throws: GatewayClientError.self) { try GatewayWebSocketURL("ftp://example.com/") }
    }
}
