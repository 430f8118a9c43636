import Foundation
import GatehouseGateway
import Testing

/// Hostile request targets: parsed once into a `RequestTarget`, refused with a JSON `400` (never a crash), and
/// routed and forwarded as the same normalised path. Sent over raw TCP, since HTTP clients normalise paths.
@Suite(.timeLimit(.minutes(3))) struct GatewayRequestTargetTests {
    /// `/open` is open; `/open/admin` is behind a realm (joe may, ann may not); `/api` too, with a base path.
    static func configuration(_ upstream: String) -> GatewayConfiguration {
        GatewayConfiguration(
            realms: [GatewayFixture.usersRealm("strict", scheme: .basic)],
            services: [
                ServiceConfiguration(name: "open", path: "/open", upstream: upstream + "/o", webSocket: true),
                ServiceConfiguration(name: "admin", path: "/open/admin", upstream: upstream + "/o/admin", realm: "strict",
                                     requireRoles: ["AUTHORIZED"], webSocket: true),
                ServiceConfiguration(name: "api", path: "/api", upstream: upstream + "/v1/", realm: "strict", requireRoles: ["AUTHORIZED"]),
            ])
    }

    // MARK: The parser

    @Test(.timeLimit(.minutes(3))) func theParserRefusesMalformedTargets() {
        let refused: [(String, Int)] = [
            ("/echo/%", 400), ("/echo/%zz", 400), ("/echo/%4", 400), ("/echo/%%41", 400), ("/echo?a=%zz", 400), ("/echo?a=%", 400),
            ("/echo?a=%4", 400), ("/a b", 400), ("/a\tb", 400), ("/a\u{7F}", 400), ("/caf\u{E9}", 400), ("/a?b=\u{E9}", 400),
            ("/a\"b", 400), ("/a<b>", 400), ("/a\\b", 400), ("/a#frag", 400), ("/a?b#frag", 400), ("", 400), ("*", 400),
            ("echo", 400), ("http://example.com/echo", 400), ("/a%2Fb", 400), ("/a%2fb", 400), ("/a%5Cb", 400), ("/a%00b", 400),
            ("/a%0d%0aX-Injected:%201", 400), ("/..", 400), ("/../echo", 400), ("/%2e%2e/", 400), ("/%2E%2e/echo", 400),
            ("/echo/../../admin", 400), ("/echo/..;/admin", 400), ("/echo/.;x/admin", 400), ("/echo/..%3b/admin", 400),
            ("/" + String(repeating: "a", count: RequestTarget.maxLength), 414),
        ]
        for (target, status) in refused {
            do {
                let parsed = try RequestTarget(parsing: target)
                Issue.record("\(target.debugDescription) was accepted as \(parsed)")
            } catch {
                #expect(error.status == status, "\(target.debugDescription): \(error)")
            }
        }
    }

    @Test(.timeLimit(.minutes(3))) func theParserNormalisesPaths() throws {
        let normalised: [(String, String)] = [
            ("/", "/"), ("/echo", "/echo"), ("/echo/", "/echo/"), ("/%65cho", "/echo"), ("/ech%6F", "/echo"), ("/ECH%6f/x", "/ECHo/x"),
            ("//echo", "/echo"), ("/echo//x//", "/echo/x/"), ("/echo/./x", "/echo/x"), ("/echo/.", "/echo/"),
            ("/echo/../admin", "/admin"), ("/echo/%2e%2E/admin", "/admin"), ("/echo/.%2e/admin", "/admin"), ("/a/b/..", "/a/"),
            ("/echo/a%20b", "/echo/a%20b"), ("/echo/%c3%a9", "/echo/%C3%A9"), ("/echo/%7e%41", "/echo/~A"),
            ("/echo/a|b^c", "/echo/a%7Cb%5Ec"), ("/echo/[x]{y}", "/echo/%5Bx%5D%7By%7D"), ("/echo/a;b=c,d", "/echo/a;b=c,d"),
            ("/echo/%3B", "/echo/%3B"), ("/echo/...", "/echo/..."), ("/echo/..a", "/echo/..a"), ("/a:b@c!$&'()*+", "/a:b@c!$&'()*+"),
        ]
        for (target, path) in normalised {
            let parsed = try RequestTarget(parsing: target)
            #expect(parsed.path == path, "\(target)")
            #expect(parsed.query == nil)
            // Normalising is idempotent: the forwarded path parses to itself.
            #expect(try RequestTarget(parsing: parsed.path) == parsed)
        }
        #expect(try RequestTarget(parsing: "/echo?").query == nil)
        #expect(try RequestTarget(parsing: "/echo?a=%41&b=1+2&c=/?d").query == "a=%41&b=1+2&c=/?d")
        #expect(try RequestTarget(parsing: "/echo?f={\"a\"}".replacingOccurrences(of: "\"", with: "")).query == "f=%7Ba%7D")
        #expect(try RequestTarget(parsing: "/echo/x?a=1").description == "/echo/x?a=1")
    }

    // MARK: Against the running gateway, over raw TCP

    @Test(.timeLimit(.minutes(3))) func malformedTargetsGet400AndTheGatewayLivesOn() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let malformed: [[UInt8]] = [
                Array("/echo/%".utf8), Array("/echo/%zz".utf8), Array("/open/%".utf8), Array("/open/x%zz".utf8), Array("/open/x?a=%zz".utf8),
                Array("/open/x?a=%".utf8), Array("/open/%2Fetc%2Fpasswd".utf8), Array("/open/a%5cb".utf8), Array("/open/%00".utf8),
                Array("/%2e%2e/".utf8), Array("/open/../../etc/passwd".utf8), Array("/open/..;/open/admin".utf8),
                Array("/open/caf".utf8) + [0xC3, 0xA9], Array("/open/".utf8) + [0xFF, 0xFE], Array("/open/x#top".utf8),
                Array("/open/a\"b".utf8), Array("/open/a<b".utf8),
            ]
            for target in malformed {
                let answer = try await RawHTTPConnection.exchange(port: fixture.port, target: target)
                let shown = String(decoding: target, as: UTF8.self).debugDescription
                #expect(answer.status == 400, "\(shown): \(answer.status) \(answer.text)")
                #expect(answer.json?["error"] == "invalid_request", "\(shown): \(answer.text)")
                #expect(answer.json?["error_description"]?.isEmpty == false)
                #expect(answer.header("Content-Type")?.hasPrefix("application/json") == true)
            }
            let long = try await RawHTTPConnection.exchange(port: fixture.port, target: "/open/" + String(repeating: "x", count: 9000))
            #expect(long.status == 414)
            #expect(long.json?["error"] == "invalid_request")
            // The same through an upgrade request: the JSON 400, not the upgrader's bare one.
            let upgrade = try await RawHTTPConnection.exchange(port: fixture.port, target: "/open/%zz", headers: [
                "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            ])
            #expect(upgrade.status == 400)
            #expect(upgrade.json?["error"] == "invalid_request")
            // Still alive, and a good request is served.
            let good = try await RawHTTPConnection.exchange(port: fixture.port, target: "/open/x?a=1")
            #expect(good.status == 200)
            #expect(try RecordingUpstream.seen(good.body).target == "/o/x?a=1")
        }
    }

    @Test(.timeLimit(.minutes(3))) func aFirstRequestThatIsNotHTTPIsAnswered400AndClosed() async throws {
        let capture = LogCapture()
        try await RecordingFixture.run(logger: capture.logger(), { Self.configuration($0) }) { fixture async throws in
            // Refused before the gateway looks at the target: answered at once and closed, never left open and silent.
            let requests: [[UInt8]] = [
                Array("GARBAGE\r\n\r\n".utf8), Array("GET /open/a b HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
                Array("GET /open/a\u{1}b HTTP/1.1\r\nHost: x\r\n\r\n".utf8), Array("GET /open/x HTTP/1.1\r\nNo colon\r\n\r\n".utf8),
                Array("GET /open/caf".utf8) + [0xC3, 0xA9] + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
                Array("POST /open/x HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab".utf8),
                Array("GET /open/x HTTP/9.9\r\nHost: x\r\n\r\n".utf8),
                // Malformed WebSocket handshakes, wherever they go: one with a chunked body, a version other than 13,
                // no key.
                Array("GET /nowhere HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8),
                Array("GET /open/x HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 99\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n".utf8),
                Array("GET /open/x HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8),
            ]
            for request in requests {
                let connection = try RawHTTPConnection(port: fixture.port)
                await connection.send(request)
                let start = ContinuousClock.now
                let (bytes, closed) = await connection.readToEnd()
                let shown = String(decoding: request.prefix(20) + request.suffix(40), as: UTF8.self).debugDescription
                #expect(closed, "\(shown)")
                // Answered at once, not left to the 10 s header-read timeout (a bound with room for two busy cores).
                #expect(ContinuousClock.now - start < .seconds(7), "\(shown)")
                let answer = RawHTTPResponse(bytes)
                // A WebSocket version the gateway does not speak: `426` naming the one it does (RFC 6455 §4.4).
                let otherVersion = String(decoding: request, as: UTF8.self).contains("Sec-WebSocket-Version: 99")
                #expect(answer?.status == (otherVersion ? 426 : 400), "\(shown)")
                if otherVersion { #expect(answer?.header("Sec-WebSocket-Version") == "13") }
                #expect(answer?.json?["error"] == "invalid_request", "\(shown)")
            }
            #expect(try await RawHTTPConnection.exchange(port: fixture.port, target: "/open/x").status == 200)
        }
        // Logged at debug: a client cannot fill the error log by sending garbage.
        let lines = capture.text.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("debug refused a request") })
        #expect(lines.contains { $0.hasPrefix("debug refused a WebSocket handshake") })
        #expect(!lines.contains { $0.hasPrefix("error") }, "\(lines.filter { $0.hasPrefix("error") })")
    }

    @Test(.timeLimit(.minutes(3))) func anOversizedHeadIsRefusedAndNeverKillsTheGateway() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            // Found by the fuzz test: a head over 64 KiB with a body, forwarded, killed the process (an
            // AsyncHTTPClient precondition). Heads are now bounded before anything is forwarded.
            let body = String(repeating: "b", count: 1198)
            for method in ["HEAD", "POST", "PUT"] {
                let huge = try await RawHTTPConnection.exchange(
                    port: fixture.port, target: Array("/open/x".utf8), method: method,
                    headers: ["X-Long: " + String(repeating: "y", count: 66_000), "Content-Length: \(body.count)"], body: Array(body.utf8))
                #expect(huge.status == 431, "\(method)")
                #expect(huge.json?["error"] == "invalid_request")
            }
            let manyFields = (0..<101).map { "X-Field-\($0): 1" }
            #expect(try await RawHTTPConnection.exchange(port: fixture.port, target: "/open/x", headers: manyFields).status == 431)
            let longField = ["X-Long: " + String(repeating: "y", count: 17 * 1024)]
            #expect(try await RawHTTPConnection.exchange(port: fixture.port, target: "/open/x", headers: longField).status == 431)
            // Within the limits: forwarded, body and all.
            let large = try await RawHTTPConnection.exchange(
                port: fixture.port, target: Array("/open/x".utf8), method: "POST",
                headers: ["X-A: " + String(repeating: "a", count: 15_000), "X-B: " + String(repeating: "b", count: 15_000),
                          "Content-Length: \(body.count)"], body: Array(body.utf8))
            #expect(large.status == 200)
            #expect(try RecordingUpstream.seen(large.body).header("X-B")?.count == 15_000)
            // On a connection already used, the gateway refuses it the same way (431) and closes.
            let connection = try RawHTTPConnection(port: fixture.port)
            await connection.send("GET /open/first HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await connection.readResponse()?.status == 200)
            await connection.send("HEAD /open/x HTTP/1.1\r\nHost: x\r\nX-Long: \(String(repeating: "y", count: 66_000))\r\nContent-Length: 4\r\n\r\nbody")
            #expect(await connection.readResponse()?.status == 431)
            #expect(try await RawHTTPConnection.exchange(port: fixture.port, target: "/open/alive").status == 200)
        }
    }

    @Test(.timeLimit(.minutes(3))) func anUpgradeOnAUsedConnectionIsNeverRedirectedToAnotherHost() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            // Hummingbird redirects such an upgrade to its own target (307, to be retried on a new connection);
            // a target starting with // would point at another host.
            for (target, status, location) in [("//evil.example/x", 307, "/evil.example/x"), ("/open//x?y=1", 307, "/open/x?y=1"),
                                               ("/open/%zz", 400, nil)] {
                let connection = try RawHTTPConnection(port: fixture.port)
                await connection.send("GET /open/first HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(await connection.readResponse()?.status == 200)
                await connection.send("GET \(target) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
                let answer = await connection.readResponse()
                #expect(answer?.status == status, "\(target)")
                #expect(answer?.header("Location") == location, "\(target)")
            }
        }
    }

    @Test(.timeLimit(.minutes(3))) func anEncodedOrDottedPathCannotDodgeTheStricterService() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let joe = "Authorization: " + basicAuthorization("joe", "welcome")
            let ann = "Authorization: " + basicAuthorization("ann", "secret")
            for target in ["/open/admin", "/open/%61dmin", "/open/ADMIN/../admin", "/open/x/../admin/y", "//open//admin", "/open/./admin/",
                           "/ope%6E/admin", "/%6f%70%65%6e/%61%64%6d%69%6e", "/open/%2e/admin", "/open/x/%2e%2e/admin"] {
                let none = try await RawHTTPConnection.exchange(port: fixture.port, target: target)
                #expect(none.status == 401, "\(target): \(none.status)")
                #expect(none.header("WWW-Authenticate") == "Basic realm=\"strict\"")
                #expect(try await RawHTTPConnection.exchange(port: fixture.port, target: target, headers: [ann]).status == 403, "\(target)")
                let allowed = try await RawHTTPConnection.exchange(port: fixture.port, target: target, headers: [joe])
                #expect(allowed.status == 200, "\(target)")
                #expect(try RecordingUpstream.seen(allowed.body).target.hasPrefix("/o/admin"), "\(target)")
            }
            // Leaving the strict prefix by dot segments routes to the open service, and forwards what was routed.
            let left = try await RawHTTPConnection.exchange(port: fixture.port, target: "/open/admin/../x")
            #expect(left.status == 200)
            #expect(try RecordingUpstream.seen(left.body).target == "/o/x")
        }
    }

    @Test(.timeLimit(.minutes(3))) func theUpstreamGetsExactlyTheRoutedPathUnderItsBase() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let forwarded: [(String, String)] = [
                ("/open", "/o"), ("/open/", "/o/"), ("/op%65n/x", "/o/x"), ("/open//x//y", "/o/x/y"), ("/open/a/./b/../c", "/o/a/c"),
                ("/open/a%20b?q=%41&r=1+2", "/o/a%20b?q=%41&r=1+2"), ("/open/%7ex", "/o/~x"), ("/open/a|b", "/o/a%7Cb"),
                ("/open/%c3%a9", "/o/%C3%A9"), ("/open/a%3Bb", "/o/a%3Bb"), ("/open/x?", "/o/x"), ("/open/x?a=[1]", "/o/x?a=%5B1%5D"),
            ]
            for (target, expected) in forwarded {
                let answer = try await RawHTTPConnection.exchange(port: fixture.port, target: target)
                #expect(answer.status == 200, "\(target): \(answer.status) \(answer.text)")
                #expect(try RecordingUpstream.seen(answer.body).target == expected, "\(target)")
            }
            // A base path with a trailing slash: kept for the prefix itself, one slash between base and rest.
            let joe = "Authorization: " + basicAuthorization("joe", "welcome")
            for (target, expected) in [("/api", "/v1/"), ("/api/items", "/v1/items"), ("/api/items/", "/v1/items/"), ("/api/../api/x", "/v1/x")] {
                let answer = try await RawHTTPConnection.exchange(port: fixture.port, target: target, headers: [joe])
                #expect(try RecordingUpstream.seen(answer.body).target == expected, "\(target)")
            }
            // Climbing out of the service, and then out of the root, is refused before anything is forwarded.
            #expect(try await RawHTTPConnection.exchange(port: fixture.port, target: "/api/../../v1/x", headers: [joe]).status == 400)
            #expect(try await RawHTTPConnection.exchange(port: fixture.port, target: "/nowhere/x").status == 404)
        }
    }

    @Test(.timeLimit(.minutes(3))) func aServiceConfigurationIsCheckedAtStart() throws {
        let upstream = "http://127.0.0.1:9"
        for (path, target) in [("/a%2Fb", upstream), ("/../x", upstream), ("/x?y", upstream), ("/x", "ftp://host/x"),
                               ("/x", "http://host/x?y=1"), ("/x", "http://user:pw@host/x"), ("/x", "http://host/%2e%2e/x")] {
            #expect(throws: GatewayConfigurationError.self, "\(path) \(target)") {
                _ = try Gateway(configuration: GatewayConfiguration(services: [ServiceConfiguration(name: "s", path: path, upstream: target)]))
            }
        }
        let gateway = try Gateway(configuration: GatewayConfiguration(services: [
            ServiceConfiguration(name: "s", path: "/%65cho//x/", upstream: upstream), ServiceConfiguration(name: "root", path: "/", upstream: upstream),
        ]))
        #expect(gateway.services.map(\.path) == ["/echo/x", ""])
    }
}
