import Foundation
import GatehouseGateway
import Testing

/// Hostile input round 2, finding 9: a first gateway request asking for another protocol than WebSocket (`h2c`) was
/// closed without an answer. The gateway does not switch to it and answers the request as it is (RFC 9110 §7.8);
/// `Upgrade` and what `Connection` names never reach the upstream. Shown with raw bytes and with curl's `--http2`.
@Suite(.timeLimit(.minutes(3))) struct NonWebSocketUpgradeTests {
    @Test func anH2CUpgradeIsAnsweredAsAPlainRequest() async throws {
        try await RecordingFixture.run({ upstream in
            GatewayConfiguration(services: [ServiceConfiguration(name: "open", path: "/", upstream: upstream)])
        }) { fixture in
            let answer = try await RawHTTPConnection.exchange(port: fixture.port, target: "/x", headers: [
                "Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA",
            ])
            #expect(answer.status == 200)
            let seen = try RecordingUpstream.seen(answer.body)
            #expect(seen.target == "/x")
            #expect(seen.header("upgrade") == nil)
            #expect(seen.header("http2-settings") == nil)

            // What curl sends for `--http2` on an http:// URL (the h2c upgrade): answered in HTTP/1.1, not switched.
            #expect(try await Self.curl(["--http2", "-o", "/dev/null", "-w", "%{http_code} %{http_version}", fixture.base + "/via-curl"]) == "200 1.1")
        }
    }

    /// A WebSocket handshake of another version than 13, as curl frames it: `426 Upgrade Required` with
    /// `Sec-WebSocket-Version: 13` (RFC 6455 §4.4), so that a client can try again in the version the gateway speaks;
    /// and one without a key, `400` — both the gateway's own answers (the recording upstream answers everything `200`).
    @Test func anotherWebSocketVersionIs426ToCurl() async throws {
        try await RecordingFixture.run({ upstream in
            GatewayConfiguration(services: [ServiceConfiguration(name: "open", path: "/", upstream: upstream)])
        }) { fixture in
            let handshake = ["-H", "Upgrade: websocket", "-H", "Connection: Upgrade"]
            let key = ["-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]
            let answer = try await Self.curl(handshake + key + ["-H", "Sec-WebSocket-Version: 8", "-D", "-", "-o", "/dev/null", fixture.base + "/ws"])
            let lines = answer.split(separator: "\r\n").map(String.init)
            #expect(lines.first?.hasPrefix("HTTP/1.1 426") == true, "\(answer)")
            #expect(lines.contains { $0.lowercased() == "sec-websocket-version: 13" }, "\(answer)")
            let keyless = try await Self.curl(handshake + ["-H", "Sec-WebSocket-Version: 13", "-o", "/dev/null", "-w", "%{http_code}", fixture.base + "/ws"])
            #expect(keyless == "400")
        }
    }

    /// curl's standard output for `arguments` (silent, 20 s at most).
    static func curl(_ arguments: [String]) async throws -> String {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", "-m", "20"] + arguments
        let output = Pipe()
        curl.standardOutput = output
        try curl.run()
        let data = await Task.detached { output.fileHandleForReading.readDataToEndOfFile() }.value
        curl.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// A well-formed WebSocket handshake to a service without WebSockets, or to no service, is a plain request:
    /// relayed with its `Upgrade` dropped, or `404` — the one request path answers it as it answers any other.
    @Test func aWebSocketHandshakeToAServiceWithoutWebSocketsIsAPlainRequest() async throws {
        try await RecordingFixture.run({ upstream in
            GatewayConfiguration(services: [ServiceConfiguration(name: "open", path: "/open", upstream: upstream)])
        }) { fixture in
            let handshake = ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]
            let answer = try await RawHTTPConnection.exchange(port: fixture.port, target: "/open/x", headers: handshake)
            #expect(answer.status == 200)
            let seen = try RecordingUpstream.seen(answer.body)
            #expect(seen.target == "/x")
            #expect(seen.header("upgrade") == nil)
            #expect(seen.header("sec-websocket-key") == "dGhlIHNhbXBsZSBub25jZQ==")
            let nowhere = try await RawHTTPConnection.exchange(port: fixture.port, target: "/nowhere", headers: handshake)
            #expect(nowhere.status == 404)
            #expect(nowhere.json?["error"] == "not_found")
        }
    }
}
