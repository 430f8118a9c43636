import Crypto
import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// KAAZING's emulated WebSocket (`wseb-1.0`) on the wire, as KAAZING's JavaScript client sends it through its bridge
/// frame (`WebSocketEmulatedProxy`, `WebSocketEmulatedProxyDownstream`, `XMLHttpBridge`), against a real gateway and a
/// recording upstream (which first sends `seen:` and what reached it, then answers `m` with `got:m`).
@Suite(.timeLimit(.minutes(3))) struct KaazingEmulationTests {
    static let page = "http://app.example:8080"

    static func configuration(_ upstream: String, scheme: ChallengeScheme?) -> GatewayConfiguration {
        let service = ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: scheme == nil ? nil : "demo",
                                           requireRoles: scheme == nil ? nil : ["AUTHORIZED"], webSocket: true, allowedOrigins: [page])
        guard let scheme else { return GatewayConfiguration(services: [service]) }
        return GatewayConfiguration(realms: [GatewayFixture.usersRealm("demo", scheme: scheme, description: "Demo Realm")], services: [service])
    }

    // MARK: The frames

    @Test func framesAreEncodedAndReadAsKaazingsClientDoes() throws {
        for length in [0, 5, 127, 128, 16_383, 16_384, 70_000] {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 7) }
            let encoded = KaazingEmulation.encode(.binary(payload))
            #expect(try KaazingEmulation.frames(in: encoded, maximumLength: 1 << 20) == [.binary(payload)], "\(length)")
        }
        // Lengths as the client's `encodeLength` writes them: 7 bits a byte, most significant first, the high bit on
        // all but the last.
        #expect(KaazingEmulation.encode(.text(Array(repeating: 0x41, count: 300))).prefix(3) == [0x81, 0x82, 0x2C])
        #expect(KaazingEmulation.encode(.command(.close)) + KaazingEmulation.encode(.command(.reconnect)) == [0x01, 0x30, 0x32, 0xFF, 0x01, 0x30, 0x31, 0xFF])
        #expect(try KaazingEmulation.frames(in: [0x8A, 0x00, 0x01, 0x30, 0x31, 0xFF], maximumLength: 10) == [.pong, .command(.reconnect)])
        // The upstream's text: every byte a code point, 0 sent as U+0100, the whole as UTF-8.
        #expect(try KaazingEmulation.bytes(fromMixedText: Array("\u{81}\u{02}a\u{100}".utf8)) == [0x81, 0x02, 0x61, 0x00])
        #expect(throws: KaazingEmulation.FormatError.self) { try KaazingEmulation.bytes(fromMixedText: [0xC3]) }
        for malformed: [UInt8] in [[0x81, 0x05, 0x61], [0x81, 0x85], [0x01, 0x30, 0x39, 0xFF], [0x05, 0x61, 0xFF], [0x00, 0x61], [0x83, 0x00]] {
            #expect(throws: KaazingEmulation.FormatError.self, "\(malformed)") { try KaazingEmulation.frames(in: malformed, maximumLength: 10) }
        }
        #expect(throws: KaazingEmulation.FormatError.self) { try KaazingEmulation.frames(in: [0x80, 0x8F, 0xFF, 0x7F], maximumLength: 1 << 20) }
        #expect(KaazingEmulation.sequenceNumber("9007199254740991") == KaazingEmulation.maximumSequence)
        for invalid: Substring in ["9007199254740992", "-1", "1e3", "", " 1"] { #expect(KaazingEmulation.sequenceNumber(invalid) == nil) }
    }

    // MARK: A whole emulated WebSocket

    @Test func anEmulatedWebSocketOpensEchoesAndCloses() async throws {
        try await RecordingFixture.run({ Self.configuration($0, scheme: nil) }) { fixture in
            let created = try await EmulationWire.create(port: fixture.port, sequence: 5, protocols: "chat")
            #expect(created.status == 201)
            #expect(created.header("X-WebSocket-Version") == "wseb-1.0")
            #expect(created.header("X-WebSocket-Protocol") == "chat")  // the upstream's choice
            #expect(created.header("Content-Type") == "text/plain;charset=utf-8")
            let (upstream, downstream) = try EmulationWire.locations(created, port: fixture.port)
            // The encoding's own URLs, as KAAZING Gateway hands them back (`ctm`: `utm`, `dtm`).
            #expect(upstream.hasPrefix("/echo/;e/utm/") && downstream.hasPrefix("/echo/;e/dtm/"))

            let stream = try await EmulationWire.downstream(port: fixture.port, path: downstream, sequence: 6)
            // The upstream saw the WebSocket's own target (no KAAZING parameter) and the application's protocol.
            let first = try await stream.frame()
            guard case .text(let text) = first, case let seenText = String(decoding: text, as: UTF8.self), seenText.hasPrefix("seen:") else {
                throw TestFailure("expected the upstream's seen: frame, got \(first)")
            }
            let seen = try RecordingUpstream.seen(Array(seenText.utf8.dropFirst(5)))
            #expect(seen.target == "/echo")
            #expect(seen.header("sec-websocket-protocol") == "chat")
            #expect(seen.header("x-websocket-version") == nil)

            // A text message with a zero byte (sent as U+0100) and the RECONNECT that ends every upstream body.
            let message = KaazingEmulation.encode(.text(Array("hello\u{0}".utf8))) + KaazingEmulation.encode(.command(.reconnect))
            #expect(try await EmulationWire.upstream(port: fixture.port, path: upstream, sequence: 6, frames: message).status == 200)
            #expect(try await stream.frame() == .text(Array("got:hello\u{0}".utf8)))

            // The client asks the next downstream (as it does when a response's text grows large): the first ends with
            // RECONNECT, the next carries the frames.
            let next = try await EmulationWire.downstream(port: fixture.port, path: downstream, sequence: 7)
            #expect(try await stream.frame() == .command(.reconnect))
            #expect(await stream.connection.readToEnd().closed)
            let again = KaazingEmulation.encode(.binary([0, 1, 2])) + KaazingEmulation.encode(.text(Array("again".utf8)))
                + KaazingEmulation.encode(.command(.reconnect))
            #expect(try await EmulationWire.upstream(port: fixture.port, path: upstream, sequence: 7, frames: again).status == 200)
            #expect(try await next.frame() == .text(Array("got:again".utf8)))

            // The client closes: CLOSE then RECONNECT upstream; the downstream ends with CLOSE, RECONNECT, and its end.
            let close = KaazingEmulation.encode(.command(.close)) + KaazingEmulation.encode(.command(.reconnect))
            #expect(try await EmulationWire.upstream(port: fixture.port, path: upstream, sequence: 8, frames: close).status == 200)
            #expect(try await next.frame() == .command(.close))
            #expect(try await next.frame() == .command(.reconnect))
            #expect(await next.connection.readToEnd().closed)
            // Gone: its URLs answer 404.
            for _ in 0..<100 where fixture.gateway.emulatedWebSockets.count > 0 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(fixture.gateway.emulatedWebSockets.count == 0)
            #expect(try await EmulationWire.upstream(port: fixture.port, path: upstream, sequence: 9, frames: close).status == 404)
        }
    }

    @Test func aRequestOutOfSequenceFailsTheWebSocket() async throws {
        try await RecordingFixture.run({ Self.configuration($0, scheme: nil) }) { fixture in
            let created = try await EmulationWire.create(port: fixture.port, sequence: 0)
            let (upstream, downstream) = try EmulationWire.locations(created, port: fixture.port)
            // A downstream must be the create's number plus one.
            #expect(try await RawHTTPConnection.exchange(port: fixture.port, target: downstream + "?.ksn=5", headers: ["X-Origin: \(Self.page)"]).status == 400)
            // The session failed: everything after is 404.
            #expect(try await EmulationWire.upstream(port: fixture.port, path: upstream, sequence: 1,
                                                     frames: KaazingEmulation.encode(.command(.reconnect))).status == 404)
        }
    }

    // MARK: Challenges, origins and malformed requests

    @Test(arguments: [ChallengeScheme.basic, .applicationBasic])
    func theRealmChallengesTheCreateInsideKaazingsEnvelope(scheme: ChallengeScheme) async throws {
        try await RecordingFixture.run({ Self.configuration($0, scheme: scheme) }) { fixture in
            // No credentials: a 200 whose body is the 401 (a browser never opens a password dialog for it).
            let (outer, inner) = try await EmulationWire.createEnveloped(port: fixture.port, sequence: 0)
            #expect(outer.status == 200)
            #expect(outer.header("Content-Type") == "application/x-message-http")
            #expect(outer.header("WWW-Authenticate") == nil)
            #expect(inner.status == 401)
            #expect(inner.header("WWW-Authenticate") == scheme.challenge(realmDescription: "Demo Realm"))
            // Without the envelope asked for, the plain 401.
            let plain = try await EmulationWire.create(port: fixture.port, sequence: 0, envelope: false)
            #expect(plain.status == 401)
            // The right password: 201 inside; the user without the role: 403 inside.
            let (_, admitted) = try await EmulationWire.createEnveloped(port: fixture.port, sequence: 0,
                                                                     extra: ["Authorization: " + basicAuthorization("joe", "welcome")])
            #expect(admitted.status == 201)
            #expect(String(decoding: admitted.body, as: UTF8.self).contains("/echo/;e/dtm/"))
            let (_, refused) = try await EmulationWire.createEnveloped(port: fixture.port, sequence: 0,
                                                                    extra: ["Authorization: " + basicAuthorization("ann", "secret")])
            #expect(refused.status == 403)
            let counters = fixture.gateway.statistics.counters(realm: "demo")
            // Counted as any request of the realm: two challenges; joe and ann both authenticated (ann then lacks the role).
            #expect(counters.challenges == 2)
            #expect(counters.successes == 2)
        }
    }

    @Test func pagesOfOtherOriginsAndMalformedRequestsAreRefused() async throws {
        try await RecordingFixture.run({ Self.configuration($0, scheme: nil) }) { fixture in
            // A page of an origin the service does not allow: neither emulated nor native.
            let (_, foreign) = try await EmulationWire.createEnveloped(port: fixture.port, sequence: 0, origin: "http://evil.example")
            #expect(foreign.status == 403)
            let native = try RawHTTPConnection(port: fixture.port)
            await native.send(KaazingWire.upgrade(path: "/echo", protocols: nil).replacingOccurrences(of: "Origin: http://127.0.0.1", with: "Origin: http://evil.example"))
            #expect(await native.readResponse()?.status == 403)
            // The version is required; an unknown session is 404; an upstream body needs a bounded length.
            let unversioned = try await RawHTTPConnection.exchange(port: fixture.port, target: "/echo/;e/ctm?.kn=1", headers: ["X-Sequence-No: 0"])
            #expect(unversioned.status == 400)
            #expect(unversioned.json?["error"] == "invalid_request")
            let unknown = String(repeating: "ab", count: 16)
            #expect(try await EmulationWire.upstream(port: fixture.port, path: "/echo/;e/ub/" + unknown, sequence: 1, frames: []).status == 404)
            #expect(try await RawHTTPConnection.exchange(port: fixture.port, target: "/echo/;e/db/nothex?.ksn=1").status == 404)
            let chunked = try await RawHTTPConnection.exchange(port: fixture.port, target: Array("/echo/;e/ub/\(unknown)".utf8), method: "POST",
                                                               headers: ["Transfer-Encoding: chunked", "X-Sequence-No: 1"], body: Array("0\r\n\r\n".utf8))
            #expect(chunked.status == 404)
            let created = try await EmulationWire.create(port: fixture.port, sequence: 0)
            let (upstream, _) = try EmulationWire.locations(created, port: fixture.port)
            // (Chunks are taken since issue 53, bounded as they come: KaazingCompatibilityTests.)
            let unbounded = try await RawHTTPConnection.exchange(port: fixture.port, target: Array(upstream.utf8), method: "POST",
                                                                 headers: ["Content-Length: 100000000", "X-Sequence-No: 1", "X-Origin: \(Self.page)"])
            #expect(unbounded.status == 413)
            // A body that is not frames fails the session (400).
            let created2 = try await EmulationWire.create(port: fixture.port, sequence: 0)
            let (upstream2, _) = try EmulationWire.locations(created2, port: fixture.port)
            #expect(try await EmulationWire.upstream(port: fixture.port, path: upstream2, sequence: 1, frames: [0x83, 0x00]).status == 400)
        }
    }

    @Test func theBridgePageIsPinnedToTheAllowedOrigins() async throws {
        try await RecordingFixture.run({ Self.configuration($0, scheme: nil) }) { fixture in
            let page = try await RawHTTPConnection.exchange(port: fixture.port, target: "/?.kr=xs")
            #expect(page.status == 200)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            let policy = try #require(page.header("Content-Security-Policy"))
            #expect(policy.contains("frame-ancestors http://app.example:8080"))
            #expect(policy.contains("connect-src 'self'"))
            // The policy's hash is the page's one script's.
            let html = page.text
            let script = try #require(html.range(of: "<script>").flatMap { start in
                html.range(of: "</script>").map { String(html[start.upperBound..<$0.lowerBound]) }
            })
            let hash = Data(SHA256.hash(data: Data(script.utf8))).base64EncodedString()
            #expect(policy.contains("script-src 'sha256-\(hash)'"))
            #expect(script.contains(#"var allowed = ["http://app.example:8080"];"#))
        }
    }
}

/// The emulated transport's requests, written as KAAZING's client (through Gatehouse's bridge page) sends them.
struct EmulationWire {
    let connection: RawHTTPConnection

    /// A create request (`GET <path>/;e/ctm?.kn=…`), answered as it came.
    static func create(port: Int, sequence: UInt64, protocols: String? = nil, envelope: Bool = false, origin: String = KaazingEmulationTests.page,
                       extra: [String] = []) async throws -> RawHTTPResponse {
        var headers = ["Content-Type: text/plain; charset=utf-8", "X-WebSocket-Version: wseb-1.0", "X-Accept-Commands: ping",
                       "X-Sequence-No: \(sequence)", "X-Origin: \(origin)"] + extra
        if let protocols { headers.append("X-WebSocket-Protocol: \(protocols)") }
        if envelope { headers.append("X-Next-Protocol: httpxe/1.1") }
        return try await RawHTTPConnection.exchange(port: port, target: "/echo/;e/ctm?.kn=4242", headers: headers)
    }

    /// A create asking for the envelope: the outer answer and the inner one.
    static func createEnveloped(port: Int, sequence: UInt64, origin: String = KaazingEmulationTests.page,
                                extra: [String] = []) async throws -> (outer: RawHTTPResponse, inner: RawHTTPResponse) {
        let outer = try await create(port: port, sequence: sequence, envelope: true, origin: origin, extra: extra)
        guard outer.status == 200, let inner = RawHTTPResponse(outer.body) else { throw TestFailure("no envelope: \(outer.status) \(outer.text)") }
        return (outer, inner)
    }

    /// The paths of a `201`'s upstream and downstream URLs, which must be this gateway's.
    static func locations(_ created: RawHTTPResponse, port: Int) throws -> (upstream: String, downstream: String) {
        let lines = created.text.split(separator: "\n").map(String.init)
        guard created.status == 201, lines.count == 2 else { throw TestFailure("not a create's answer: \(created.status) \(created.text)") }
        let prefix = "http://127.0.0.1:\(port)"
        guard lines.allSatisfy({ $0.hasPrefix(prefix) }) else { throw TestFailure("URLs of another origin: \(lines)") }
        return (String(lines[0].dropFirst(prefix.count)), String(lines[1].dropFirst(prefix.count)))
    }

    /// An upstream `POST` as the client sends it: its URL's path plus `&.krn=<random>`, the frames as text.
    /// `origin`: the bridge's `X-Origin` (the page's), as on every request the bridge sends.
    static func upstream(port: Int, path: String, sequence: UInt64, frames: [UInt8], origin: String? = KaazingEmulationTests.page) async throws
        -> RawHTTPResponse {
        let text = String(String.UnicodeScalarView(frames.map { Unicode.Scalar($0 == 0 ? 0x100 : UInt32($0))! }))
        let body = Array(text.utf8)
        return try await RawHTTPConnection.exchange(port: port, target: Array((path + "&.krn=0.25").utf8), method: "POST",
                                                    headers: ["Content-Type: text/plain; charset=utf-8", "X-Sequence-No: \(sequence)",
                                                              "Content-Length: \(body.count)"] + (origin.map { ["X-Origin: \($0)"] } ?? []), body: body)
    }

    /// A downstream request; its head must be the streaming `200`.
    static func downstream(port: Int, path: String, sequence: UInt64) async throws -> EmulationWire {
        let connection = try RawHTTPConnection(port: port)
        await connection.send("GET \(path)?.ksn=\(sequence)&.kc=text/plain;charset=windows-1252&.kb=4096&.kid=77 HTTP/1.1\r\n"
                              + "Host: 127.0.0.1:\(port)\r\nX-Origin: \(KaazingEmulationTests.page)\r\n\r\n")
        guard let head = await connection.readResponse(toHEAD: true) else { throw TestFailure("no downstream head") }
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == KaazingEmulation.downstreamContentType)
        #expect(head.header("Connection") == "close")
        return EmulationWire(connection: connection)
    }

    /// The next frame on a downstream (heartbeat `NOP`s skipped).
    func frame() async throws -> KaazingEmulation.Frame {
        while true {
            guard let type = await connection.readBytes(count: 1)?.first else { throw TestFailure("the downstream ended") }
            var bytes = [type]
            if type & 0x80 == 0 {
                repeat {
                    guard let byte = await connection.readBytes(count: 1)?.first else { throw TestFailure("a frame cut short") }
                    bytes.append(byte)
                } while bytes.last != 0xFF
            } else {
                var length = 0
                while true {
                    guard let byte = await connection.readBytes(count: 1)?.first else { throw TestFailure("a length cut short") }
                    bytes.append(byte)
                    length = length << 7 | Int(byte & 0x7F)
                    if byte & 0x80 == 0 { break }
                }
                if length > 0 {
                    guard let payload = await connection.readBytes(count: length) else { throw TestFailure("a payload cut short") }
                    bytes += payload
                }
            }
            if bytes == [0x01, 0x30, 0x30, 0xFF] { continue }
            let frames = try KaazingEmulation.frames(in: bytes, maximumLength: 1 << 20)
            guard frames.count == 1 else { throw TestFailure("not one frame: \(bytes)") }
            return frames[0]
        }
    }
}
