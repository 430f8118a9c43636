import Foundation
import GatehouseHTTP
import GatehouseGateway
import HTTPTypes
import HummingbirdWSClient
import Testing

/// What the upstream (and the log) may see of a request: no realm credentials from the query, cookies or headers,
/// and forwarding fields stated by the gateway, not claimed by the client.
@Suite(.timeLimit(.minutes(3))) struct GatewayForwardingTests {
    /// `joe:welcome` in base64, and a wrong password's.
    static let joeSecret = Data("joe:welcome".utf8).base64EncodedString()
    static let wrongSecret = Data("joe:Wrong-Secret-4711".utf8).base64EncodedString()

    /// A realm reading credentials from `?credentials=`, the `session` cookie and `X-Credentials`.
    static func configuration(_ upstream: String, trustedProxies: [String]? = nil) -> GatewayConfiguration {
        GatewayConfiguration(
            realms: [RealmConfiguration(name: "demo", scheme: .applicationBasic, headers: ["X-Credentials"], queryParameters: ["credentials"],
                                        cookies: ["session"],
                                        loginModules: [LoginModuleConfiguration(type: "users", flag: .required, users: [GatewayFixture.joe])])],
            services: [
                ServiceConfiguration(name: "api", path: "/api", upstream: upstream + "/v1", realm: "demo", webSocket: true),
                ServiceConfiguration(name: "open", path: "/open", upstream: upstream + "/o", webSocket: true),
                ServiceConfiguration(name: "dead", path: "/dead", upstream: "http://127.0.0.1:1/x", realm: "demo", webSocket: true),
            ],
            trustedProxies: trustedProxies)
    }

    static func encoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }

    @Test(.timeLimit(.minutes(3))) func realmCredentialsInTheQueryOrCookiesAreNotForwarded() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let secret = Self.encoded(Self.joeSecret)
            // The credential parameter is removed, the others are kept as sent.
            let query = try await HTTP.send(.GET, fixture.base + "/api/x?keep=1&credentials=\(secret)&also=%41")
            #expect(query.status == 200)
            let seen = try RecordingUpstream.seen(query.body)
            #expect(seen.target == "/v1/x?keep=1&also=%41")
            #expect(seen.header("X-Gateway-User") == "joe")
            // Its name percent-encoded: read as the same parameter, and removed as well.
            let encodedName = try await HTTP.send(.GET, fixture.base + "/api/x?cred%65ntials=\(secret)")
            #expect(encodedName.status == 200)
            #expect(try RecordingUpstream.seen(encodedName.body).target == "/v1/x")
            // The credential cookie is removed; the others are sent as one Cookie field.
            let cookie = try await HTTP.send(.GET, fixture.base + "/api/y", headers: [("Cookie", "a=1; session=\(Self.joeSecret); b=2")])
            #expect(cookie.status == 200)
            let withCookies = try RecordingUpstream.seen(cookie.body)
            #expect(withCookies.header("Cookie") == "a=1; b=2")
            #expect(!withCookies.headers.values.contains { $0.contains(Self.joeSecret) })
            let onlySession = try await HTTP.send(.GET, fixture.base + "/api/y", headers: [("Cookie", "session=\(Self.joeSecret)")])
            #expect(try RecordingUpstream.seen(onlySession.body).header("Cookie") == nil)
            // The declared header is never forwarded either.
            let header = try await HTTP.send(.GET, fixture.base + "/api/z", headers: [("X-Credentials", Self.joeSecret)])
            #expect(header.status == 200)
            #expect(try RecordingUpstream.seen(header.body).header("X-Credentials") == nil)
            // A WebSocket whose credentials are in the query: the upstream's handshake has no trace of them.
            let handshake = try await Self.firstWebSocketMessage(fixture.wsBase + "/api/ws?credentials=\(secret)&room=7")
            #expect(handshake.target == "/v1/ws?room=7")
            #expect(handshake.header("X-Gateway-User") == "joe")
        }
    }

    @Test(.timeLimit(.minutes(3))) func anUnreachableUpstreamIsAWarningOncePerInterval() async throws {
        let capture = LogCapture()
        try await RecordingFixture.run(logger: capture.logger(), { Self.configuration($0) }) { fixture async throws in
            for _ in 0..<3 {
                let answer = try await HTTP.send(.GET, fixture.base + "/dead/x", headers: [("Authorization", "Basic \(Self.joeSecret)")])
                #expect(answer.status == 502)
            }
            // The operator learns why a 502 was answered, once for the burst rather than once a request.
            let warnings = capture.text.components(separatedBy: "upstream unavailable: answered 502").count - 1
            #expect(warnings == 1, "\(capture.text)")
            #expect(capture.text.contains("dead"))
        }
    }

    @Test(.timeLimit(.minutes(3))) func theGatewaysOwnRefusalsAreJSON() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let answers = [
                (401, try await HTTP.send(.GET, fixture.base + "/api/x")),
                (404, try await HTTP.send(.GET, fixture.base + "/nowhere")),
                (502, try await HTTP.send(.GET, fixture.base + "/dead/x", headers: [("Authorization", "Basic \(Self.joeSecret)")])),
            ]
            for (status, answer) in answers {
                #expect(answer.status == status)
                #expect(answer.header("Content-Type") == "application/json; charset=utf-8", "\(status)")
                #expect(answer.json?["error"]?.stringValue?.isEmpty == false, "\(status): \(String(decoding: answer.body, as: UTF8.self))")
            }
            #expect(answers[0].1.header("WWW-Authenticate")?.hasPrefix("Application Basic") == true)
        }
    }

    @Test(.timeLimit(.minutes(3))) func anOptionsWithMaxForwardsZeroIsAnsweredByTheGatewayAfterAdmission() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let forTheGateway = [("Max-Forwards", "0")]
            #expect(try await HTTP.send(.OPTIONS, fixture.base + "/api/x", headers: forTheGateway).status == 401)
            let wrong = try await HTTP.send(.OPTIONS, fixture.base + "/api/x", headers: forTheGateway + [("Authorization", "Basic \(Self.wrongSecret)")])
            #expect(wrong.status == 401)
            // Admitted: answered here (RFC 9110 §7.6.2), the upstream never asked.
            let admitted = try await HTTP.send(.OPTIONS, fixture.base + "/api/x", headers: forTheGateway + [("Authorization", "Basic \(Self.joeSecret)")])
            #expect(admitted.status == 200)
            #expect(admitted.header("Allow") == "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS")
            #expect(admitted.body.isEmpty)
            // Zero written otherwise is zero too.
            let zeros = try await HTTP.send(.OPTIONS, fixture.base + "/api/x", headers: [("Max-Forwards", "00"), ("Authorization", "Basic \(Self.joeSecret)")])
            #expect(zeros.status == 200 && zeros.body.isEmpty)
            // Above zero: forwarded, with one hop less to go; without the field, as it came.
            let forwarded = try await HTTP.send(.OPTIONS, fixture.base + "/api/x", headers: [("Max-Forwards", "3"), ("Authorization", "Basic \(Self.joeSecret)")])
            let seen = try RecordingUpstream.seen(forwarded.body)
            #expect(seen.method == "OPTIONS" && seen.header("Max-Forwards") == "2", "\(seen)")
            let plain = try RecordingUpstream.seen(try await HTTP.send(.OPTIONS, fixture.base + "/api/x", headers: [("Authorization", "Basic \(Self.joeSecret)")]).body)
            #expect(plain.method == "OPTIONS" && plain.header("Max-Forwards") == nil)
        }
    }

    @Test(.timeLimit(.minutes(3))) func realmCredentialsAreNeverLogged() async throws {
        let capture = LogCapture()
        try await RecordingFixture.run(logger: capture.logger(), { Self.configuration($0) }) { fixture async throws in
            for secret in [Self.joeSecret, Self.wrongSecret] {
                _ = try await HTTP.send(.GET, fixture.base + "/api/x?credentials=\(Self.encoded(secret))")
                _ = try await HTTP.send(.GET, fixture.base + "/api/x", headers: [("Cookie", "session=\(secret)")])
                _ = try await HTTP.send(.GET, fixture.base + "/api/x", headers: [("X-Credentials", secret)])
                _ = try await HTTP.send(.GET, fixture.base + "/api/%zz?credentials=\(Self.encoded(secret))")
            }
            // An accepted WebSocket whose upstream is down: logged, without the query. (Bounded: when the gateway's
            // close frame arrives in the same read as its 101, the test's WebSocket client may miss it and wait.)
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    _ = try? await WebSocketClient.connect(url: fixture.wsBase + "/dead/ws?credentials=\(Self.encoded(Self.joeSecret))",
                                                           logger: GatewayFixture.logger) { inbound, _, _ in
                        for try await _ in inbound.messages(maxSize: 1 << 16) {}
                    }
                }
                group.addTask { try? await Task.sleep(for: .seconds(5)) }
                await group.next()
                group.cancelAll()
            }
            for _ in 0..<50 where !capture.text.contains("WebSocket upstream failed") { try await Task.sleep(for: .milliseconds(100)) }
        }
        let log = capture.text
        #expect(log.contains("challenge"))  // the log did record the requests
        #expect(log.contains("WebSocket upstream failed"))
        for secret in [Self.joeSecret, Self.wrongSecret] {
            #expect(!log.contains(secret))
            #expect(!log.contains(Self.encoded(secret)))
            #expect(!log.contains(String(secret.prefix(12))))
        }
    }

    @Test(.timeLimit(.minutes(3))) func clientForwardingFieldsAreReplacedByTheGatewaysOwn() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let claimed: [(String, String)] = [
                ("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-Host", "evil.example"), ("X-Forwarded-Proto", "https"),
                ("X-Forwarded-Port", "1"), ("Forwarded", "for=6.6.6.6;proto=https"), ("X-Real-IP", "6.6.6.6"), ("X-Gateway-User", "root"),
            ]
            let answer = try await HTTP.send(.GET, fixture.base + "/open/x", headers: claimed)
            let seen = try RecordingUpstream.seen(answer.body)
            let host = "127.0.0.1:\(fixture.port)"
            #expect(seen.header("X-Forwarded-For") == "127.0.0.1")
            #expect(seen.header("X-Forwarded-Proto") == "http")
            #expect(seen.header("X-Forwarded-Host") == host)
            #expect(seen.header("Forwarded") == "for=127.0.0.1;host=\"\(host)\";proto=http")
            #expect(seen.header("X-Forwarded-Port") == nil)
            #expect(seen.header("X-Real-IP") == nil)
            #expect(seen.header("X-Gateway-User") == nil)
            #expect(!seen.headers.values.contains { $0.contains("6.6.6.6") || $0.contains("evil.example") })
            // The WebSocket handshake to the upstream carries the same.
            let handshake = try await Self.firstWebSocketMessage(fixture.wsBase + "/open/ws", headers: [("X-Forwarded-For", "6.6.6.6")])
            #expect(handshake.header("X-Forwarded-For") == "127.0.0.1")
            #expect(handshake.header("Forwarded") == "for=127.0.0.1;host=\"\(host)\";proto=http")
        }
    }

    @Test(.timeLimit(.minutes(3))) func aTrustedProxysForwardingFieldsAreKeptAndAppendedTo() async throws {
        try await RecordingFixture.run({ Self.configuration($0, trustedProxies: ["10.0.0.0/8", "127.0.0.1"]) }) { fixture async throws in
            let answer = try await HTTP.send(.GET, fixture.base + "/open/x", headers: [
                ("X-Forwarded-For", "203.0.113.9"), ("X-Forwarded-Host", "www.example.com"), ("X-Forwarded-Proto", "https"),
                ("Forwarded", "for=203.0.113.9;proto=https"), ("X-Gateway-User", "root"),
            ])
            let seen = try RecordingUpstream.seen(answer.body)
            #expect(seen.header("X-Forwarded-For") == "203.0.113.9, 127.0.0.1")
            #expect(seen.header("X-Forwarded-Host") == "www.example.com")
            #expect(seen.header("X-Forwarded-Proto") == "https")
            // Forwarded is restated from X-Forwarded-* (the family trusted proxies set by default), the client's own
            // never passed on: a proxy such as nginx passes it through as the client wrote it (issue 54, finding 1).
            #expect(seen.header("Forwarded")
                    == "for=203.0.113.9;host=\"www.example.com\";proto=https, for=127.0.0.1;host=\"127.0.0.1:\(fixture.port)\";proto=http")
            #expect(seen.header("X-Gateway-User") == nil)  // never taken from a client, trusted or not
            let forged = try RecordingUpstream.seen(try await HTTP.send(.GET, fixture.base + "/open/x", headers: [
                ("X-Forwarded-For", "203.0.113.9"), ("Forwarded", "for=198.51.100.66;host=evil.example;proto=https"), ("X-Real-IP", "198.51.100.66"),
            ]).body)
            #expect(forged.header("Forwarded") == "for=203.0.113.9, for=127.0.0.1;host=\"127.0.0.1:\(fixture.port)\";proto=http")
            #expect(!forged.headers.values.contains { $0.contains("198.51.100.66") || $0.contains("evil.example") })
        }
    }

    @Test(.timeLimit(.minutes(3))) func trustedProxiesMatchAddressesAndBlocks() throws {
        let trusted = try TrustedProxies(["10.0.0.0/8", "192.168.1.7", "::1", "fd00::/8"])
        for address in ["10.1.2.3", "::ffff:10.1.2.3", "192.168.1.7", "::1", "[::1]", "fd12:3456::1"] {
            #expect(trusted.contains(address), "\(address)")
        }
        for address in ["11.0.0.1", "192.168.1.8", "::2", "fe80::1", "garbage", "", "127.0.0.1"] {
            #expect(!trusted.contains(address), "\(address)")
        }
        #expect(!TrustedProxies.none.contains("127.0.0.1"))
        for entry in ["10.0.0.0/33", "abc", "::1/129", "10.0.0.1/x", "10.0.0"] {
            #expect(throws: TrustedProxies.InvalidEntry.self, "\(entry)") { _ = try TrustedProxies([entry]) }
        }
        #expect(throws: GatewayConfigurationError.self) {
            _ = try Gateway(configuration: GatewayConfiguration(trustedProxies: ["not an address"]))
        }
    }

    /// Opens a WebSocket and decodes the upstream's first message (`seen:` + its handshake).
    static func firstWebSocketMessage(_ url: String, headers: [(String, String)] = []) async throws -> RecordingUpstream.Seen {
        var fields = HTTPFields()
        for (name, value) in headers { if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) } }
        let first = Calls<String>()
        try await WebSocketClient.connect(url: url, configuration: .init(additionalHeaders: fields), logger: GatewayFixture.logger) { inbound, outbound, _ in
            for try await message in inbound.messages(maxSize: 1 << 16) {
                if case .text(let text) = message { first.record(text) }
                break
            }
            try await outbound.close(.normalClosure, reason: nil)
        }
        guard let text = first.all.first, text.hasPrefix("seen:") else { throw TestFailure("no handshake description from the upstream") }
        return try RecordingUpstream.seen(Array(text.dropFirst(5).utf8))
    }
}
