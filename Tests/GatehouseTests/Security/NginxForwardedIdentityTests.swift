import Foundation
import GatehouseChecks
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// Hostile input round 3, finding 1 (issue 54): behind nginx configured as the README's `Examples/nginx/*.conf` say
/// (it appends the real address to `X-Forwarded-For` and passes a client's `Forwarded` through untouched), a client
/// sending `Forwarded: for=<anything>` picked its own address: `TrustedProxies` preferred `Forwarded` whenever present,
/// so every per-address guard was off and the audit log recorded made-up addresses. Now one field is read, the one
/// configured (`--forwarded-header`, `x-forwarded-for` by default, what those files set).
@Suite(.timeLimit(.minutes(3))) struct NginxForwardedIdentityTests {
    static func port(_ server: TestServer) -> Int { URLComponents(string: server.baseURL)?.port ?? 0 }

    /// A client-credentials token request to nginx from `127.0.0.2` (nginx listens on 127.0.0.1 and so appends
    /// `127.0.0.2`: the real address, distinct from nginx's own), with a forged `Forwarded`.
    static func token(through nginx: Nginx, secret: String, forged: String) async throws -> Int {
        let body = Array("grant_type=client_credentials&scope=authorization.introspect".utf8)
        let headers = ["Authorization: Basic " + Data("balance-service:\(secret)".utf8).base64EncodedString(),
                       "Content-Type: application/x-www-form-urlencoded", "Content-Length: \(body.count)",
                       "Forwarded: for=\(forged);host=evil.example;proto=https"]
        return try await RawHTTPConnection.exchange(port: nginx.port, target: Array("/mfp/api/az/v1/token".utf8), method: "POST",
                                                    headers: headers, body: body, from: "127.0.0.2").status
    }

    @Test func aForgedForwardedThroughTheREADMEsNginxNeitherEscapesTheLockNorReachesTheAuditLog() async throws {
        let policy = Admin.policy + "\nsourceThrottle: { threshold: 3, durationSec: 60 }\n"
        try await TestServer.run(policy: policy, trustedProxies: ["127.0.0.1"]) { server async throws in
            let reader = try await Admin.reader(server)
            let snippet = try Nginx.snippet("mfp-same-origin.conf", upstreamPort: Self.port(server))
            try await Nginx.run(serverBody: snippet) { nginx async throws in
                #expect(try await Self.token(through: nginx, secret: "s3cret", forged: "198.51.100.1") == 200)
                // Three wrong secrets, each claiming a new address: they count against the real one.
                for attempt in 0..<3 {
                    #expect(try await Self.token(through: nginx, secret: "guess\(attempt)", forged: "198.51.100.\(10 + attempt)") == 401)
                }
                // Locked: even the right secret, whatever address is claimed next.
                #expect(try await Self.token(through: nginx, secret: "s3cret", forged: "198.51.100.99") == 429)
                #expect(try await Self.token(through: nginx, secret: "s3cret", forged: "\"[2001:db8::1]\"") == 429)
            }
            // The audit log has the real address (the one nginx appended), never a claimed one.
            let page = try await Admin.send(.GET, server, "/audit?limit=200", token: reader)
            #expect(page.status == 200)
            let events = page.json?["events"]?.arrayValue ?? []
            let issued = events.filter { $0["event"] == "token.issued" && $0["actor"] == "balance-service" }
            try #require(issued.count == 1, "\(events)")
            #expect(issued[0]["address"] == "127.0.0.2")
            let locked = events.filter { $0["event"] == "source.locked" }
            #expect(locked.count == 1 && locked.first?["detail"]?.stringValue?.hasPrefix("source:127.0.0.2 locked") == true, "\(locked)")
            let texts = String(decoding: page.body, as: UTF8.self)
            #expect(!texts.contains("198.51.100.") && !texts.contains("2001:db8::1"), "a claimed address reached the audit log")
        }
    }

    /// Finding 2: a KAAZING client's in-band request (the HTTP request inside the WebSocket) carrying its own
    /// `X-Forwarded-For` replaced the proxy's (the gateway read the address from the inner fields merged over the
    /// outer ones): 24 password guesses, no throttle. nginx (`Examples/nginx/gateway.conf`) cannot see inside the
    /// WebSocket; the address comes from the outer connection and its proxy only.
    @Test func anInBandXForwardedForDoesNotEscapeTheGatewaysThrottle() async throws {
        let realm = GatewayFixture.usersRealm("demo", scheme: .basic, description: "Demo Realm")
        try await RecordingFixture.run({ upstream in
            var configuration = GatewayConfiguration(realms: [realm], services: [
                ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: "demo", requireRoles: ["AUTHORIZED"], webSocket: true),
            ], trustedProxies: ["127.0.0.1"])
            configuration.sourceThrottle = AccountLockoutSettings(threshold: 3, durationSec: 60)
            return configuration
        }) { fixture async throws in
            let snippet = try Nginx.snippet("gateway.conf", upstreamPort: fixture.port)
            try await Nginx.run(serverBody: snippet) { nginx async throws in
                /// One KAAZING handshake through nginx from 127.0.0.2, its in-band request claiming `claimed`.
                func attempt(_ password: String, claimed: String) async throws -> Int {
                    let connection = try RawHTTPConnection(port: nginx.port, from: "127.0.0.2")
                    await connection.send(KaazingWire.upgrade(protocols: KaazingHandshake.protocolName))
                    guard let answer = await connection.readResponse(toHEAD: true), answer.status == 101 else {
                        throw TestFailure("the outer upgrade through nginx was not switched")
                    }
                    let wire = KaazingWire(connection: connection)
                    #expect(try await wire.frame() == .init(opcode: 0x2, payload: KaazingHandshake.noRedirect))
                    try await wire.send(KaazingHandshake.Request(target: "/echo", fields: [
                        ("Authorization", basicAuthorization("joe", password)), ("X-Forwarded-For", claimed), ("Forwarded", "for=\(claimed)"),
                        ("X-Real-IP", claimed),
                    ]))
                    return try await wire.answer().status
                }
                for guess in 0..<3 { #expect(try await attempt("guess\(guess)", claimed: "198.51.100.\(guess)") == 401) }
                // 127.0.0.2 (what nginx appended) is locked, whatever the inner request claims next.
                #expect(try await attempt("welcome", claimed: "198.51.100.77") == 429)
                #expect(try await attempt("welcome", claimed: "203.0.113.1") == 429)
            }
            // Nobody else is: the proxy's own address, directly.
            let direct = try await KaazingWire.open(port: fixture.port)
            try await direct.send(KaazingHandshake.Request(target: "/echo", fields: [("Authorization", basicAuthorization("joe", "welcome"))]))
            #expect(try await direct.answer().status == 101)
        }
    }
}
