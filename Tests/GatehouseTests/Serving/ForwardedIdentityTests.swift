import Foundation
import GatehouseHTTP
import GatehouseProtocol
import HTTPTypes
import Testing

/// Behind a reverse proxy (issue 35): `gatehouse serve --trusted-proxy` believes the forwarding fields of the proxies
/// it names — the client's address for the throttles and the audit log, the host a page came from for the same-origin
/// test — and nobody else's. Before, every client behind a proxy was the proxy's one address, and a same-origin web
/// app behind a `Host`-rewriting proxy (nginx's default) was refused `ORIGIN_NOT_ALLOWED`.
@Suite(.timeLimit(.minutes(3))) struct ForwardedIdentityTests {
    static func client(_ trusted: [String], peer: String, _ fields: [(String, String)],
                       field: TrustedProxies.ForwardedField = .xForwardedFor) -> TrustedProxies.Client {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        guard let proxies = try? TrustedProxies(trusted, forwardedField: field) else { return .init(address: "not a valid list") }
        return proxies.client(peer: peer, fields: headers)
    }

    @Test func theClientIsTheNearestAddressNoTrustedProxyAppended() {
        // An untrusted peer's fields are ignored: it could claim anything.
        #expect(Self.client(["10.0.0.0/8"], peer: "198.51.100.2", [("X-Forwarded-For", "203.0.113.7"), ("X-Forwarded-Host", "app.example")])
                == .init(address: "198.51.100.2"))
        #expect(Self.client(["10.0.0.1"], peer: "10.0.0.1", [("X-Forwarded-For", "203.0.113.7")]).address == "203.0.113.7")
        // What the client wrote at the left is never believed past the proxy that appended its real address.
        #expect(Self.client(["10.0.0.1"], peer: "10.0.0.1", [("X-Forwarded-For", "1.2.3.4, 203.0.113.7")]).address == "203.0.113.7")
        // Two trusted hops, and the field split over two lines.
        #expect(Self.client(["10.0.0.0/8"], peer: "10.0.0.1", [("X-Forwarded-For", "1.2.3.4, 203.0.113.7"), ("X-Forwarded-For", "10.9.9.9")]).address
                == "203.0.113.7")
        // Every hop trusted: the leftmost.
        #expect(Self.client(["10.0.0.0/8"], peer: "10.0.0.1", [("X-Forwarded-For", "10.1.1.1, 10.2.2.2")]).address == "10.1.1.1")
        // A hop that is no address ends the walk at the last address believed.
        #expect(Self.client(["10.0.0.1"], peer: "10.0.0.1", [("X-Forwarded-For", "203.0.113.7, unknown")]).address == "10.0.0.1")
        // RFC 7239, with ports, IPv6 and quoting, when it is the field configured (`--forwarded-header forwarded`):
        // then X-Forwarded-* are a client's claim, never read.
        let forwarded = Self.client(["10.0.0.1"], peer: "10.0.0.1", [
            ("Forwarded", #"for=192.0.2.60;proto=https;host="App.Example:8443", for="[2001:db8::17]:4711""#),
            ("X-Forwarded-For", "198.51.100.99"), ("X-Forwarded-Host", "evil.example"),
        ], field: .forwarded)
        #expect(forwarded == .init(address: "2001:db8::17", host: "app.example:8443", proto: "https"))
        #expect(Self.client(["10.0.0.1"], peer: "10.0.0.1", [("Forwarded", "for=\"192.0.2.60:80\"")], field: .forwarded).address == "192.0.2.60")
        #expect(Self.client(["10.0.0.1"], peer: "10.0.0.1", [("X-Forwarded-For", "198.51.100.99")], field: .forwarded).address == "10.0.0.1")
        // Issue 54, finding 1: by default (X-Forwarded-For, what the README's nginx sets) a client's `Forwarded`,
        // which nginx passes through untouched, is never read — not even preferred when both are present.
        #expect(Self.client(["10.0.0.1"], peer: "10.0.0.1", [("Forwarded", "for=192.0.2.60;host=evil.example;proto=https"),
                                                             ("X-Forwarded-For", "203.0.113.7")])
                == .init(address: "203.0.113.7"))
        #expect(Self.client(["10.0.0.1"], peer: "10.0.0.1", [("Forwarded", "for=192.0.2.60")]).address == "10.0.0.1")
        // X-Forwarded-Host/Proto: the first (the client-facing proxy's), and only a host's characters.
        #expect(Self.client(["10.0.0.1"], peer: "10.0.0.1", [("X-Forwarded-Host", "app.example, inner:8080"), ("X-Forwarded-Proto", "HTTPS")])
                == .init(address: "10.0.0.1", host: "app.example", proto: "https"))
        #expect(Self.client(["10.0.0.1"], peer: "10.0.0.1", [("X-Forwarded-Host", "evil.example/path"), ("X-Forwarded-Proto", "gopher")])
                == .init(address: "10.0.0.1"))
    }

    static func port(_ server: TestServer) -> Int { URLComponents(string: server.baseURL)?.port ?? 0 }

    static func token(_ server: TestServer, from source: String = "127.0.0.1", forwardedFor: String?, secret: String) async throws -> Int {
        let body = Array("grant_type=client_credentials&scope=authorization.introspect".utf8)
        var headers = ["Authorization: Basic " + Data("balance-service:\(secret)".utf8).base64EncodedString(),
                       "Content-Type: application/x-www-form-urlencoded", "Content-Length: \(body.count)"]
        if let forwardedFor { headers.append("X-Forwarded-For: \(forwardedFor)") }
        return try await RawHTTPConnection.exchange(port: port(server), target: Array("/mfp/api/az/v1/token".utf8), method: "POST",
                                                    headers: headers, body: body, from: source).status
    }

    /// The source throttle counts the forwarded client from a trusted proxy, the peer from anyone else.
    @Test func theThrottleCountsTheForwardedClientOnlyFromATrustedProxy() async throws {
        let policy = TestPolicies.standard + "\nsourceThrottle: { threshold: 3, durationSec: 60 }\n"
        try await TestServer.run(policy: policy, trustedProxies: ["127.0.0.1"]) { server async throws in
            for attempt in 0..<3 { #expect(try await Self.token(server, forwardedFor: "203.0.113.7", secret: "guess\(attempt)") == 401) }
            #expect(try await Self.token(server, forwardedFor: "203.0.113.7", secret: "s3cret") == 429)
            // Another client behind the same proxy, and the proxy's own requests, are not locked.
            #expect(try await Self.token(server, forwardedFor: "203.0.113.8", secret: "s3cret") == 200)
            #expect(try await Self.token(server, forwardedFor: nil, secret: "s3cret") == 200)
            // From a peer that is no trusted proxy, X-Forwarded-For is ignored: a new claimed address each time
            // does not escape the lock of the peer's own.
            for attempt in 0..<3 {
                #expect(try await Self.token(server, from: "127.0.0.2", forwardedFor: "198.51.100.\(attempt)", secret: "guess\(attempt)") == 401)
            }
            #expect(try await Self.token(server, from: "127.0.0.2", forwardedFor: "198.51.100.200", secret: "s3cret") == 429)
        }
    }

    /// A same-origin web app behind a proxy that rewrites `Host` (nginx's default `proxy_pass`): its registration
    /// comes with `Origin: http://app.example` and `Host: 127.0.0.1:<port>`.
    @Test func aSameOriginPageBehindAHostRewritingProxyRegistersWhenTheProxyIsTrusted() async throws {
        let key = try ClientKeyPair()
        let data = RegistrationData(device: DeviceData(id: "web-device", hardware: nil, platform: "web"),
                                    application: ApplicationData(id: "com.sample.web", clientPlatform: "web", version: "1.0"),
                                    attributes: ["sdk_protocol_version": 1])
        let body = Array(try JSONEncoder().encode(RegistrationRequest(signedRegistrationData: try JWS.sign(data, with: key, kid: nil))))
        func register(_ server: TestServer, from source: String, forwardedHost: String?) async throws -> RawHTTPResponse {
            var headers = ["Content-Type: application/json", "Content-Length: \(body.count)", "Origin: http://app.example"]
            if let forwardedHost { headers.append("X-Forwarded-Host: \(forwardedHost)") }
            return try await RawHTTPConnection.exchange(port: Self.port(server), target: Array("/mfp/api/registration/v1/self".utf8), method: "POST",
                                                        headers: headers, body: body, from: source)
        }
        try await TestServer.run(trustedProxies: ["127.0.0.1"]) { server async throws in
            #expect(try await register(server, from: "127.0.0.1", forwardedHost: "app.example").status == 201)
            // The same claim from a peer that is no trusted proxy is not believed.
            #expect(try await register(server, from: "127.0.0.2", forwardedHost: "app.example").status == 403)
        }
        try await TestServer.run { server in
            // Without --trusted-proxy: refused, and the answer says what to change.
            let refused = try await register(server, from: "127.0.0.1", forwardedHost: "app.example")
            #expect(refused.status == 403)
            let message = (try? JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any])?["errorMsg"] as? String ?? ""
            #expect(message.contains("allowedOrigins") && message.contains("--trusted-proxy"), "\(message)")
        }
    }
}
