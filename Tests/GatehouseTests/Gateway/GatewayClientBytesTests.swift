import Foundation
@testable import GatehouseGateway
import Testing

/// The client's side of the event-loop relay read in place (`GatewayHTTPHandler` over `HTTPMessageHead` and
/// `ChunkedBodyScanner`, no HTTP decoder): what an HTTP/1.1 server must accept (empty lines before a request line,
/// heads and bodies cut anywhere, chunk extensions and trailers), what it must refuse after a good request (a
/// malformed one, a head too large: `400`/`431` and the end of the connection), a body cut short by the client's last
/// byte, a graceful shutdown with requests in flight, a WebSocket's first frames sent right behind its upgrade
/// request, and generated request streams (the
/// parser's differential tests' generator) relayed to a real upstream as the parser reads them.
@Suite(.timeLimit(.minutes(3))) struct GatewayClientBytesTests {
    @Test func emptyLinesBeforeARequestLineAreIgnoredAndHeadsMayArriveByteByByte() async throws {
        try await RecordingFixture.run({ GatewayRelayTests.configuration($0) }) { fixture async throws in
            let connection = try RawHTTPConnection(port: fixture.port)
            // A client that ends a body with an extra CRLF (RFC 9112 §2.2), then two requests in one write.
            await connection.send("\r\n\r\nGET /open/1 HTTP/1.1\r\nHost: x\r\n\r\n\r\nGET /open/2 HTTP/1.1\r\nHost: x\r\n\r\n")
            for target in ["/o/1", "/o/2"] {
                let response = await connection.readResponse()
                #expect(response?.status == 200)
                #expect(try response.map { try RecordingUpstream.seen($0.body).target } == target)
            }
            // One byte per write: read whatever the cuts.
            for byte in "GET /open/3?a=b HTTP/1.1\r\nHost: x\r\nX-Cut: anywhere\r\n\r\n".utf8 { await connection.send([byte]) }
            let cut = await connection.readResponse()
            #expect(cut?.status == 200)
            let seen = try cut.map { try RecordingUpstream.seen($0.body) }
            #expect(seen?.target == "/o/3?a=b")
            #expect(seen?.header("x-cut") == "anywhere")
        }
    }

    @Test func aTargetAskedForAgainIsRoutedAsTheFirstTime() async throws {
        try await RecordingFixture.run({ GatewayRelayTests.configuration($0) }) { fixture async throws in
            let connection = try RawHTTPConnection(port: fixture.port)
            // The connection remembers its last route; probes are never remembered as one.
            let targets = ["/open/a?x=1", "/open/a?x=1", "/open/b", "/open/a?x=1", "/health", "/health", "/open/./b/../a?x=1", "/open/a?x=2"]
            await connection.send(targets.map { "GET \($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined())
            var seen: [String] = []
            for _ in targets {
                guard let answer = await connection.readResponse() else { break }
                seen.append((try? RecordingUpstream.seen(answer.body).target) ?? (answer.json?["status"]).map { "probe \($0)" } ?? "?")
            }
            #expect(seen == ["/o/a?x=1", "/o/a?x=1", "/o/b", "/o/a?x=1", "probe ok", "probe ok", "/o/a?x=1", "/o/a?x=2"])
        }
    }

    @Test func chunkedBodiesGoOnAsTheyCameWithExtensionsAndTrailers() async throws {
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(services: [ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo")])
        }) { fixture async throws in
            let connection = try RawHTTPConnection(port: fixture.gatewayApp.port)
            let request = "POST /echo/chunks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;name=value\r\nhello\r\n1;quoted=\"a b\"\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: yes\r\n\r\n"
            // Cut inside the head, a chunk size, an extension, the data and the trailers; then a second request.
            let bytes = Array(request.utf8)
            for cut in stride(from: 0, to: bytes.count, by: 7) { await connection.send(Array(bytes[cut..<min(cut + 7, bytes.count)])) }
            let answer = await connection.readResponse()
            #expect(answer?.status == 200)
            #expect(answer.map { String(decoding: $0.body, as: UTF8.self).hasSuffix("body=hello world") } == true)
            await connection.send("GET /echo/after HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await connection.readResponse()?.status == 200)
        }
    }

    @Test func aMalformedRequestAfterAGoodOneIsRefusedAndEndsTheConnection() async throws {
        try await RecordingFixture.run({ GatewayRelayTests.configuration($0) }) { fixture async throws in
            for (bad, status) in [("GET /open/2 HTTP/1.1\r\nHost: x\r\nBad Name: x\r\n\r\n", 400),
                                  ("GET /open/2 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
                                  ("GET /open/2 HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 40_000) + "\r\n\r\n", 431)] {
                let connection = try RawHTTPConnection(port: fixture.port)
                // Pipelined behind a good request: the good one is answered, then the refusal, then the end.
                await connection.send("GET /open/1 HTTP/1.1\r\nHost: x\r\n\r\n" + bad)
                #expect(await connection.readResponse()?.status == 200)
                let refused = await connection.readResponse()
                #expect(refused?.status == status, "\(bad.prefix(60))")
                #expect(refused?.json?["error"] == "invalid_request")
                #expect(refused?.header("Connection") == "close")
                #expect(await connection.readToEnd().closed)
            }
        }
    }

    @Test func aBodyCutShortByTheClientsLastByteEndsTheConnection() async throws {
        try await RecordingFixture.run({ GatewayRelayTests.configuration($0) }) { fixture async throws in
            // Answered before its body is complete (no service), then the client sends its last byte: closed at
            // once, not after the idle timeout.
            let answered = try RawHTTPConnection(port: fixture.port, timeout: .seconds(5))
            await answered.send("POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
            #expect(await answered.readResponse()?.status == 404)
            answered.shutdownWrite()
            #expect(await answered.readToEnd().closed)
            // Not answered yet: 400, then closed.
            let waiting = try RawHTTPConnection(port: fixture.port, timeout: .seconds(5))
            await waiting.send("POST /open/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")
            waiting.shutdownWrite()
            let (bytes, closed) = await waiting.readToEnd()
            // With its reason phrase, as every answer of the gateway's own.
            #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
            #expect(closed)
        }
    }

    @Test func requestsInFlightWhenTheGatewayStopsAreAnsweredAndItsConnectionsClosed() async throws {
        // Connections the relay owns (Hummingbird's connection task ends after their first request) still follow the
        // graceful shutdown: answered in full, then closed; an idle one closed at once.
        let ann = GatewayUser.hashing(username: "ann", password: "slow", roles: ["AUTHORIZED"], cost: 12)
        try await RecordingFixture.run({ upstream in
            GatewayConfiguration(
                realms: [RealmConfiguration(name: "slow", scheme: .basic, loginModules: [
                    LoginModuleConfiguration(type: "users", flag: .required, users: [ann]),
                ])],
                services: [
                    ServiceConfiguration(name: "open", path: "/open", upstream: upstream + "/o"),
                    ServiceConfiguration(name: "closed", path: "/closed", upstream: upstream + "/c", realm: "slow", requireRoles: ["AUTHORIZED"]),
                ])
        }) { fixture async throws in
            let idle = try RawHTTPConnection(port: fixture.port)
            await idle.send("GET /open/idle HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await idle.readResponse()?.status == 200)
            var inFlight: [RawHTTPConnection] = []
            for index in 0..<4 {
                let connection = try RawHTTPConnection(port: fixture.port)
                // A first request on the open service, then one that waits for bcrypt (cost 12) on the same connection.
                await connection.send("GET /open/\(index) HTTP/1.1\r\nHost: x\r\n\r\nGET /closed/\(index) HTTP/1.1\r\nHost: x\r\n"
                                      + "Authorization: \(basicAuthorization("ann", "slow"))\r\n\r\n")
                inFlight.append(connection)
            }
            // Every connection served (its first answer read): the second requests are in flight.
            for connection in inFlight { #expect(await connection.readResponse()?.status == 200) }
            await fixture.gatewayApp.stop()
            for (index, connection) in inFlight.enumerated() {
                let answer = await connection.readResponse()
                #expect(answer?.status == 200, "request \(index)")
                #expect(try answer.map { try RecordingUpstream.seen($0.body).target } == "/c/\(index)")
                #expect(await connection.readToEnd().closed)
            }
            #expect(await idle.readToEnd().closed)
        }
    }

    @Test func aWebSocketsFirstFramesRightBehindItsUpgradeRequestAreRelayed() async throws {
        try await RecordingFixture.run({ GatewayRelayTests.configuration($0) }) { fixture async throws in
            let connection = try RawHTTPConnection(port: fixture.port)
            let upgrade = Array(("GET /open/echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                 + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
            // The upgrade and two frames in one write: read before the bridge is in place, kept for it.
            await connection.send(upgrade + GatewayInBandFrameTests.clientFrame(0x1, fin: true, Array("early".utf8))
                                  + GatewayInBandFrameTests.clientFrame(0x1, fin: true, Array("next".utf8))
                                  + GatewayInBandFrameTests.clientFrame(0x8, fin: true, [0x03, 0xE8]))
            let (bytes, _) = await connection.readToEnd()
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 101 "))
            guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
                Issue.record("no 101")
                return
            }
            let texts = GatewayInBandFrameTests.serverTexts(bytes[end.upperBound...])
            #expect(texts.first?.hasPrefix("seen:") == true)
            #expect(Array(texts.dropFirst()) == ["got:early", "got:next"])
        }
    }

    /// Streams sent per run to the real gateway (`GATEHOUSE_GATEWAY_STREAM_COUNT`, `GATEHOUSE_GATEWAY_STREAM_SEED`).
    static let streams = ProcessInfo.processInfo.environment["GATEHOUSE_GATEWAY_STREAM_COUNT"].flatMap(Int.init) ?? 2000
    static let seed = ProcessInfo.processInfo.environment["GATEHOUSE_GATEWAY_STREAM_SEED"].flatMap(UInt64.init) ?? 0x6761_7465_7761_7921

    /// What the gateway must do with `bytes`, by the parser's reading (`HTTPMessageHeadTests.ours`, itself tested
    /// against NIO's decoder), with empty lines before a request line skipped as the gateway skips them: the requests
    /// it relays, one after the other while each keeps the connection going, and whether a refused request follows.
    static func expected(_ bytes: [UInt8]) -> (requests: [HTTPMessageHeadTests.Message], refusedAfter: Bool) {
        var requests: [HTTPMessageHeadTests.Message] = []
        var rest = bytes[...]
        while true {
            rest = rest.drop { $0 == 0x0D || $0 == 0x0A }
            guard !rest.isEmpty else { return (requests, false) }
            switch HTTPMessageHeadTests.ours(Array(rest)) {
            case .message(let message, let length, let keepsGoing):
                requests.append(message)
                rest = rest.dropFirst(length)
                if !keepsGoing { return (requests, false) }
            case .incomplete:
                return (requests, false)
            case .refused:
                return (requests, true)
            }
        }
    }

    /// Whether the request after the first `count` of `bytes` is a `HEAD`.
    static func startsWithHEAD(_ bytes: [UInt8], after count: Int) -> Bool {
        var rest = bytes[...]
        for _ in 0..<count {
            rest = rest.drop { $0 == 0x0D || $0 == 0x0A }
            guard case .message(_, let length, _) = HTTPMessageHeadTests.ours(Array(rest)) else { return false }
            rest = rest.dropFirst(length)
        }
        return rest.drop { $0 == 0x0D || $0 == 0x0A }.starts(with: "HEAD ".utf8)
    }

    @Test func generatedRequestStreamsAreRelayedAsTheParserReadsThem() async throws {
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(services: [ServiceConfiguration(name: "all", path: "/", upstream: upstream)])
        }) { fixture async throws in
            var generator = RequestStreamGenerator(seed: Self.seed)
            var relayed = 0, refused = 0
            for index in 0..<Self.streams {
                let bytes = generator.next()
                let (requests, refusedAfter) = Self.expected(bytes)
                // Upgrades are Hummingbird's (a first request) or redirected (a later one): not this test's.
                if requests.contains(where: { $0.fields.contains { $0.0.lowercased() == "upgrade" } }) { continue }
                let connection = try RawHTTPConnection(port: fixture.gatewayApp.port, timeout: .seconds(10))
                await connection.send(bytes)
                let context = "stream \(index) of seed \(Self.seed): \(String(decoding: bytes, as: UTF8.self).debugDescription)"
                for request in requests {
                    guard let answer = await connection.readResponse(toHEAD: request.method == "HEAD") else {
                        Issue.record("no answer to \(request) in \(context)")
                        return
                    }
                    if (try? RequestTarget(parsing: request.target)) == nil {
                        #expect(answer.status == 400, "\(context)")
                    } else if request.method == "GET" || request.method == "POST" || request.method == "PUT" || request.method == "DELETE"
                        || request.method == "PATCH" {
                        // The upstream echoes the method and the body it got.
                        let echoed = String(decoding: answer.body, as: UTF8.self)
                        #expect(answer.status == 200, "\(context)")
                        #expect(echoed.hasPrefix(request.method + " ") && echoed.hasSuffix("body=" + String(decoding: request.body, as: UTF8.self)),
                                "\(echoed) for \(request) in \(context)")
                        relayed += 1
                    } else {
                        #expect(answer.status < 500, "\(context)")
                    }
                }
                if refusedAfter {
                    // A `HEAD` whose body is malformed is answered without the body its `Content-Length` announces.
                    let toHEAD = Self.startsWithHEAD(bytes, after: requests.count)
                    let answer = await connection.readResponse(toHEAD: toHEAD)
                    #expect(answer?.status == 400 || answer?.status == 431, "\(String(describing: answer?.status)) \(context)")
                    if !toHEAD { #expect(answer?.json?["error"] == "invalid_request", "\(context)") }
                    refused += 1
                }
            }
            // The streams must exercise both.
            #expect(relayed > Self.streams / 4, "only \(relayed) requests relayed")
            #expect(refused > Self.streams / 20, "only \(refused) refusals")
        }
    }
}
