import Foundation
import GatehouseGateway
import HummingbirdWSClient
import Testing

/// The gateway's `/metrics` (Prometheus text) after a known sequence: connections, requests by service and
/// status, authentications by realm and result, WebSocket upgrades and upstream errors.
@Suite(.timeLimit(.minutes(3))) struct GatewayMetricsTests {
    /// The value of the sample of `name` whose labels include every one of `labels`, if there is one.
    static func sample(_ text: String, _ name: String, _ labels: [String: String] = [:]) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            let parts = line.split(separator: " ")
            guard parts.count >= 2, labels.allSatisfy({ line.contains("\($0.key)=\"\($0.value)\"") }) else { continue }
            return Double(parts[parts.count - 1])
        }
        return nil
    }

    @Test func aKnownSequenceIsCountedInTheScrape() async throws {
        // Port 1 on loopback: nothing listens (a service whose upstream is down).
        let closedPort = 1
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(
                realms: [GatewayFixture.usersRealm("demo", scheme: .applicationBasic)],
                services: [
                    ServiceConfiguration(name: "api", path: "/api", upstream: upstream + "/v1", realm: "demo", requireRoles: ["AUTHORIZED"]),
                    ServiceConfiguration(name: "down", path: "/down", upstream: "http://127.0.0.1:\(closedPort)", realm: "demo"),
                    ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: "demo", webSocket: true),
                ])
        }) { fixture async throws in
            #expect(try await fixture.get("/api/x").status == 401)                                                   // challenge
            #expect(try await fixture.get("/api/x", headers: [("Authorization", basicAuthorization("joe", "wrong"))]).status == 401)  // failure
            #expect(try await fixture.get("/api/x", headers: [("Authorization", basicAuthorization("joe", "welcome"))]).status == 200) // success
            #expect(try await fixture.get("/api/x", headers: [("Authorization", basicAuthorization("ann", "secret"))]).status == 403) // forbidden
            #expect(try await fixture.get("/down/x", headers: [("Authorization", basicAuthorization("joe", "welcome"))]).status == 502) // success, upstream error
            #expect(try await fixture.get("/nowhere").status == 404)
            for head in ["NOT HTTP\r\n\r\n", "GET /api/x HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 70_000) + "\r\n\r\n"] {
                let raw = try RawHTTPConnection(port: fixture.gatewayApp.port, timeout: .seconds(5))
                _ = await raw.send(head)
                _ = await raw.readToEnd()
            }
            _ = try await WebSocketClient.connect(
                url: fixture.wsBase + "/echo", configuration: .init(additionalHeaders: [.authorization: basicAuthorization("joe", "welcome")]),
                logger: GatewayFixture.logger
            ) { inbound, outbound, _ in
                try await outbound.write(.text("hello"))
                var iterator = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                _ = try await iterator.next()
            }

            let scrape = try await fixture.get("/metrics")
            #expect(scrape.status == 200 && scrape.header("Content-Type")?.hasPrefix("text/plain") == true)
            let text = String(decoding: scrape.body, as: UTF8.self)
            let auth = "gatehouse_gateway_authentications_total"
            #expect(Self.sample(text, auth, ["realm": "demo", "result": "challenge"]) == 1)
            #expect(Self.sample(text, auth, ["realm": "demo", "result": "failure"]) == 1)
            #expect(Self.sample(text, auth, ["realm": "demo", "result": "success"]) == 3, "api, down and the WebSocket")
            #expect(Self.sample(text, auth, ["realm": "demo", "result": "forbidden"]) == 1)
            let requests = "gatehouse_gateway_requests_total"
            #expect(Self.sample(text, requests, ["service": "api", "status": "401"]) == 2)
            #expect(Self.sample(text, requests, ["service": "api", "status": "200"]) == 1)
            #expect(Self.sample(text, requests, ["service": "api", "status": "403"]) == 1)
            #expect(Self.sample(text, requests, ["service": "down", "status": "502"]) == 1)
            #expect(Self.sample(text, requests, ["service": "none", "status": "404"]) == 1)
            #expect(Self.sample(text, requests, ["service": "none", "status": "400"]) == 1, "a malformed head")
            #expect(Self.sample(text, requests, ["service": "none", "status": "431"]) == 1, "an oversized head")
            #expect(Self.sample(text, "gatehouse_gateway_request_duration_seconds_count", ["service": "api"]) == 4)
            #expect(Self.sample(text, "gatehouse_gateway_upstream_errors_total", ["service": "down", "protocol": "http"]) == 1)
            #expect(Self.sample(text, "gatehouse_gateway_websocket_upgrades_total", ["service": "echo"]) == 1)
            #expect((Self.sample(text, "gatehouse_gateway_connections_total") ?? 0) >= 2, "keep-alive HTTP and the WebSocket")
            #expect(Self.sample(text, "gatehouse_gateway_connections_open") != nil)
        }
    }
}
