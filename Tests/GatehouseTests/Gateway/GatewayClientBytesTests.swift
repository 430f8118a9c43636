import Foundation
@testable import GatehouseGateway
import Testing

/// The client's side of the event-loop relay read in place (`GatewayHTTPHandler` over `HTTPMessageHead` and
/// `ChunkedBodyScanner`, no HTTP decoder): what an HTTP/1.1 server must accept (empty lines before a request line,
/// heads and bodies cut anywhere, chunk extensions and trailers), what it must refuse after a good request (a
/// malformed one, a head too large: `400`/`431` and the end of the connection), and a WebSocket's first frames sent
/// right behind its upgrade request.
@Suite(.timeLimit(.minutes(1))) struct GatewayClientBytesTests {
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
}
