import GatehouseProtocol
import Foundation
@testable import GatehouseGateway
import HummingbirdWSClient
import Testing

/// The event-loop relay (`GatewayHTTPHandler`, `WebSocketBridge`): pipelined requests answered in order on one
/// connection, bodies streamed both ways (lengths and chunks), a client's malformed body answered `400`, requests
/// admitted on the loop and on a task alike, and a WebSocket's handshake answered as RFC 6455 says.
@Suite(.timeLimit(.minutes(3))) struct GatewayRelayTests {
    static func configuration(_ upstream: String) -> GatewayConfiguration {
        GatewayConfiguration(
            realms: [GatewayFixture.usersRealm("strict", scheme: .basic)],
            services: [
                ServiceConfiguration(name: "open", path: "/open", upstream: upstream + "/o", webSocket: true),
                ServiceConfiguration(name: "closed", path: "/closed", upstream: upstream + "/c", realm: "strict", requireRoles: ["AUTHORIZED"]),
            ])
    }

    @Test func pipelinedRequestsAreAnsweredInOrderOnOneConnection() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let connection = try RawHTTPConnection(port: fixture.port)
            let joe = "Authorization: " + basicAuthorization("joe", "welcome")
            // The second needs bcrypt (a task), the others are admitted on the loop: the answers keep the order.
            await connection.send("GET /open/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /closed/2 HTTP/1.1\r\nHost: x\r\n\(joe)\r\n\r\n"
                                  + "GET /open/3 HTTP/1.1\r\nHost: x\r\n\r\nGET /closed/4 HTTP/1.1\r\nHost: x\r\n\(joe)\r\n\r\n")
            for target in ["/o/1", "/c/2", "/o/3", "/c/4"] {
                let response = await connection.readResponse()
                #expect(response?.status == 200, "\(target)")
                #expect(try response.map { try RecordingUpstream.seen($0.body).target } == target)
            }
            // Still open: keep-alive after pipelining.
            await connection.send("GET /open/5 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await connection.readResponse()?.status == 200)
        }
    }

    @Test func bodiesStreamBothWaysWithLengthOrChunks() async throws {
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(services: [ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo")])
        }) { fixture async throws in
            let port = fixture.gatewayApp.port
            // 768 KiB each way (the echo answers with a description that holds the body).
            let body = Array(String(repeating: "0123456789abcdef", count: 48 * 1024).utf8)
            let sized = try await RawHTTPConnection.exchange(port: port, target: Array("/echo/sized".utf8), method: "POST",
                                                             headers: ["Content-Length: \(body.count)"], body: body)
            #expect(sized.status == 200)
            #expect(String(decoding: sized.body, as: UTF8.self).hasSuffix("body=" + String(decoding: body, as: UTF8.self)))
            // The same body in chunks of 64 KiB.
            var chunked: [UInt8] = []
            for start in stride(from: 0, to: body.count, by: 65536) {
                let chunk = body[start..<min(start + 65536, body.count)]
                chunked += Array(String(chunk.count, radix: 16).utf8) + Array("\r\n".utf8) + chunk + Array("\r\n".utf8)
            }
            chunked += Array("0\r\n\r\n".utf8)
            let streamed = try await RawHTTPConnection.exchange(port: port, target: Array("/echo/chunked".utf8), method: "PUT",
                                                                headers: ["Transfer-Encoding: chunked"], body: chunked)
            #expect(streamed.status == 200)
            #expect(String(decoding: streamed.body, as: UTF8.self).hasSuffix("body=" + String(decoding: body, as: UTF8.self)))
        }
    }

    @Test func aMalformedBodyIsTheClientsFault() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let refused = try await RawHTTPConnection.exchange(port: fixture.port, target: Array("/open/x".utf8), method: "POST",
                                                               headers: ["Transfer-Encoding: chunked"], body: Array("zz\r\nnot a chunk\r\n".utf8))
            #expect(refused.status == 400)
            #expect(refused.json?["error"] == "invalid_request")
            // The gateway lives on.
            #expect(try await RawHTTPConnection.exchange(port: fixture.port, target: "/open/alive").status == 200)
        }
    }

    @Test func aWebSocketHandshakeIsAnsweredAsRFC6455Says() async throws {
        // RFC 6455 §1.3's example.
        #expect(WebSocketAccept.value(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let connection = try RawHTTPConnection(port: fixture.port)
            await connection.send("GET /open/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                  + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            let answer = await connection.readResponse()
            #expect(answer?.status == 101)
            #expect(answer?.header("Sec-WebSocket-Accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
            // Counted among the open WebSockets (graceful shutdown closes it with 1001), once the bridge is up.
            var opened = 0
            for _ in 0..<100 where opened == 0 {
                opened = fixture.gateway.openWebSockets.count
                if opened == 0 { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(opened == 1)
            // Relayed both ways, frames and all, through the bridge.
            let message = try await WebSocketClient.connect(url: fixture.wsBase + "/open/echo", logger: GatewayFixture.logger) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                _ = try await messages.next()  // the upstream's `seen:` description
                try await outbound.write(.text("ping"))
                guard case .text(let text) = try await messages.next() else { return }
                #expect(text == "got:ping")
            }
            _ = message
        }
    }
}
