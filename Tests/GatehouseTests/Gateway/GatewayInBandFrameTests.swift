import Foundation
import GatehouseClient
import GatehouseClientNIO
import GatehouseGateway
import HummingbirdWSClient
import NIOWebSocket
import Testing

/// The gateway's in-band frames (`GatewayRevalidation`) belong to the gateway: an upstream cannot send them to
/// phish the client's credentials, a client cannot send them to the upstream, the SDK answers them only on
/// connections it opened as revalidating, and a revalidation must keep the same user.
@Suite(.timeLimit(.minutes(3))) struct GatewayInBandFrameTests {
    static let bob = GatewayUser.hashing(username: "bob", password: "builder", roles: ["AUTHORIZED"], cost: 4)

    /// `/ws` behind a realm of joe and bob (both AUTHORIZED) that revalidates every `every` seconds; `/open` without
    /// a realm.
    static func configuration(_ upstream: String, every: Double = 0.4, grace: Double = 1.5) -> GatewayConfiguration {
        var realm = RealmConfiguration(name: "demo", scheme: .basic, authorizationTimeout: every, loginModules: [
            LoginModuleConfiguration(type: "users", flag: .required, users: [GatewayFixture.joe, bob]),
        ])
        realm.revalidate = true
        realm.revalidationGrace = grace
        return GatewayConfiguration(realms: [realm], services: [
            ServiceConfiguration(name: "ws", path: "/ws", upstream: upstream, realm: "demo", requireRoles: ["AUTHORIZED"], webSocket: true),
            ServiceConfiguration(name: "open", path: "/open", upstream: upstream, webSocket: true),
        ])
    }

    static func isReserved(_ message: WebSocketMessage) -> Bool {
        if case .text(let text) = message { return text.hasPrefix(GatewayRevalidation.reservedPrefix) }
        return false
    }

    static func isReserved(_ message: GatewayWebSocketMessage) -> Bool {
        if case .text(let text) = message { return text.hasPrefix(GatewayRevalidation.reservedPrefix) }
        return false
    }

    @Test(.timeLimit(.minutes(3))) func anUpstreamCannotChallengeTheClientInBand() async throws {
        let capture = LogCapture()
        try await RecordingFixture.run(logger: capture.logger(), { Self.configuration($0, every: 30) }) { fixture async throws in
            // The upstream sends a challenge and an answer frame before "hello": the client sees "hello" first, and
            // its challenge handler is asked once (for the handshake), never by the upstream's frame.
            let login = CountingLoginHandler(repeating: .joe)
            try await GatewayWebSocketClient.connectRevalidating(
                url: fixture.wsBase + "/ws/phish", challengeHandler: BasicChallengeHandler(loginHandler: login), logger: GatewayFixture.logger
            ) { messages, outbound in
                var iterator = messages.makeAsyncIterator()
                guard case .text(let first) = try await iterator.next() else { throw TestFailure("no message") }
                #expect(first == "hello")
                try await outbound.write(.text("ping"))
                guard case .text(let echoed) = try await iterator.next() else { throw TestFailure("no echo") }
                #expect(echoed == "got:ping")
            }
            #expect(login.asked == 1)
            // A plain connection to an open service: the reserved frames are dropped there too.
            try await WebSocketClient.connect(url: fixture.wsBase + "/open/phish", logger: GatewayFixture.logger) { inbound, outbound, _ in
                var iterator = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                let first = try await iterator.next()
                #expect(first.map(Self.isReserved) == false)
                if case .text(let text) = first { #expect(text == "hello") }
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
        // Logged as a warning, without the frames' content.
        let log = capture.text
        // The phishing upstream sends two reserved frames per connection: the first is a warning, the next one debug.
        #expect(log.split(separator: "\n").filter { $0.hasPrefix("warning dropped an upstream frame with the gateway's reserved prefix") }.count == 2)
        #expect(log.contains("debug dropped an upstream frame with the gateway's reserved prefix dropped=2"))
        #expect(!log.contains("am9lOndlbGNvbWU="))
        #expect(!log.contains("gatehouse-challenge"))
    }

    @Test(.timeLimit(.minutes(3))) func aClientCannotSendTheGatewaysFramesToTheUpstream() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            try await WebSocketClient.connect(url: fixture.wsBase + "/open/echo", logger: GatewayFixture.logger) { inbound, outbound, _ in
                var iterator = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                guard case .text(let seen) = try await iterator.next(), seen.hasPrefix("seen:") else { throw TestFailure("no handshake description") }
                try await outbound.write(.text(GatewayRevalidation.answerPrefix + basicAuthorization("joe", "welcome")))
                try await outbound.write(.text(GatewayRevalidation.challengePrefix + "Basic realm=\"x\""))
                try await outbound.write(.text("after"))
                guard case .text(let echoed) = try await iterator.next() else { throw TestFailure("no echo") }
                #expect(echoed == "got:after")  // the upstream never got the reserved frames
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
    }

    /// A client frame as a browser writes it: masked with `key`.
    static func clientFrame(_ opcode: UInt8, fin: Bool, _ payload: [UInt8], key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]) -> [UInt8] {
        precondition(payload.count < 126)
        return [(fin ? 0x80 : 0) | opcode, 0x80 | UInt8(payload.count)] + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    /// The text messages of the unmasked frames in `bytes` (fragments joined), up to a close frame.
    static func serverTexts(_ bytes: ArraySlice<UInt8>) -> [String] {
        var texts: [String] = []
        var current: [UInt8] = []
        var index = bytes.startIndex
        while index + 2 <= bytes.endIndex {
            let opcode = bytes[index] & 0x0F, fin = bytes[index] & 0x80 != 0
            var length = Int(bytes[index + 1] & 0x7F)
            index += 2
            if length == 127 { break }  // no message here is that long
            if length == 126 {
                guard index + 2 <= bytes.endIndex else { break }
                length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
                index += 2
            }
            guard index + length <= bytes.endIndex else { break }
            if opcode == 0x8 { break }
            current += bytes[index..<index + length]
            index += length
            if fin {
                texts.append(String(decoding: current, as: UTF8.self))
                current = []
            }
        }
        return texts
    }

    @Test(.timeLimit(.minutes(3))) func fragmentedMessagesAreFilteredWhereverTheirPrefixIsSplit() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let connection = try RawHTTPConnection(port: fixture.port)
            await connection.send("""
                GET /open/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n
                """)
            let upgraded = try #require(await connection.readResponse())
            #expect(upgraded.status == 101)
            let reserved = Array(GatewayRevalidation.answerPrefix.utf8) + Array(basicAuthorization("joe", "welcome").utf8)
            var frames: [UInt8] = []
            // The reserved prefix split after one byte, and inside the prefix: both dropped, whatever follows.
            for split in [1, 5, GatewayRevalidation.reservedPrefix.utf8.count] {
                frames += Self.clientFrame(0x1, fin: false, Array(reserved[..<split]))
                frames += Self.clientFrame(0x0, fin: true, Array(reserved[split...]))
            }
            // Ordinary messages in one, two and three fragments (each with a key of its own) arrive whole.
            frames += Self.clientFrame(0x1, fin: true, Array("one".utf8))
            frames += Self.clientFrame(0x1, fin: false, Array("t".utf8), key: [1, 2, 3, 4]) + Self.clientFrame(0x0, fin: true, Array("wo".utf8), key: [9, 8, 7, 6])
            frames += Self.clientFrame(0x1, fin: false, Array("th".utf8)) + Self.clientFrame(0x0, fin: false, []) + Self.clientFrame(0x0, fin: true, Array("ree".utf8))
            frames += Self.clientFrame(0x8, fin: true, [0x03, 0xE8])
            await connection.send(frames)
            let (bytes, _) = await connection.readToEnd()
            let texts = Self.serverTexts(bytes[...])
            #expect(texts.first?.hasPrefix("seen:") == true)
            #expect(Array(texts.dropFirst()) == ["got:one", "got:two", "got:three"])
        }
    }

    @Test(.timeLimit(.minutes(3))) func aRevalidationMustAuthenticateTheSameUser() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let url = fixture.wsBase + "/ws/echo"
            // joe at the handshake, bob in band: closed with 1008.
            let switching = CountingLoginHandler(.joe, PasswordCredentials(username: "bob", password: "builder"))
            let closed = try await GatewayWebSocketClient.connectRevalidating(
                url: url, challengeHandler: BasicChallengeHandler(loginHandler: switching), logger: GatewayFixture.logger
            ) { messages, _ in
                for try await message in messages { #expect(!Self.isReserved(message)) }
            }
            #expect(switching.asked == 2)
            #expect(closed?.closeCode == .policyViolation)
            #expect(closed?.reason == "revalidation changed the user")
            #expect(fixture.gateway.statistics.counters(realm: "demo").expiredConnections == 1)
            // joe both times: the connection lives on past several deadlines.
            let same = CountingLoginHandler(repeating: .joe)
            let kept = try await GatewayWebSocketClient.connectRevalidating(
                url: url, challengeHandler: BasicChallengeHandler(loginHandler: same), logger: GatewayFixture.logger
            ) { messages, outbound in
                var iterator = messages.makeAsyncIterator()
                _ = try await iterator.next()  // the upstream's handshake description
                try await Task.sleep(for: .milliseconds(1000))
                try await outbound.write(.text("still here"))
                guard case .text(let echoed) = try await iterator.next() else { throw TestFailure("no echo") }
                #expect(echoed == "got:still here")
            }
            #expect(same.asked >= 2)
            #expect(kept?.closeCode != .policyViolation)
        }
    }

    @Test(.timeLimit(.minutes(3))) func onlyARevalidatingConnectionAnswersInBandChallenges() async throws {
        try await RecordingFixture.run({ Self.configuration($0, grace: 0.5) }) { fixture async throws in
            // connect (not connectRevalidating): the gateway's challenge arrives as data and is not answered.
            let login = CountingLoginHandler(repeating: .joe)
            let answers = try WebSocketChallengeAnswers(BasicChallengeHandler(loginHandler: login), url: fixture.wsBase + "/ws/echo")
            let received = Calls<String>()
            let close = try await GatewayWebSocketClient.connect(url: fixture.wsBase + "/ws/echo", logger: GatewayFixture.logger,
                                                                 answer: answers.answer) { inbound, _ in
                for try await message in inbound {
                    if case .text(let text) = message { received.record(text) }
                }
            }
            #expect(login.asked == 1)
            #expect(received.all.contains(GatewayRevalidation.challengePrefix + "Basic realm=\"demo\""))
            #expect(close?.closeCode == .policyViolation)
            #expect(close?.reason == "revalidation not answered")
        }
    }

    @Test(.timeLimit(.minutes(3))) func theSDKNeverAnswersAChallengeItsHandshakeDidNotAsk() async throws {
        // Straight to a server that is not the gateway: no challenge on the handshake, then an in-band one.
        let upstream = try await RunningApp.start(logger: GatewayFixture.logger) { onRunning in
            RecordingUpstream.makeApplication(logger: GatewayFixture.logger, onServerRunning: onRunning)
        }
        let login = CountingLoginHandler(repeating: .joe)
        let received = Calls<String>()
        do {
            try await GatewayWebSocketClient.connectRevalidating(
                url: "ws://127.0.0.1:\(upstream.port)/phish", challengeHandler: BasicChallengeHandler(loginHandler: login),
                logger: GatewayFixture.logger
            ) { messages, outbound in
                for try await message in messages {
                    guard case .text(let text) = message else { continue }
                    received.record(text)
                    if text == "hello" { try await outbound.write(.text("ping")) }
                    if text == "got:ping" { break }
                }
            }
        } catch {
            await upstream.stop()
            throw error
        }
        await upstream.stop()
        #expect(login.asked == 0)
        #expect(!received.all.contains { $0.hasPrefix(GatewayRevalidation.challengePrefix) })
        #expect(!received.all.contains { $0.hasPrefix("got:" + GatewayRevalidation.answerPrefix) })  // never answered
        #expect(received.all.contains("got:ping"))
    }
}
