import Foundation
import GatehouseProtocol
import Testing

/// Codes, client assertions and token lifetimes (reference §2.3, §3.3, §3.6).
@Suite(.timeLimit(.minutes(3))) struct TokenTests {
    /// A client that has passed the PIN check.
    static func pinClient(_ server: TestServer, app: String = "com.sample.pincodeswift", platform: String = "ios") async throws -> ProtocolClient {
        var client = try ProtocolClient(server, app: app, platform: platform)
        try await client.register()
        _ = try await client.preauthorize(scope: "accessRestricted")
        let right = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]])
        #expect(right.status == 200)
        return client
    }

    /// `expires_in` must be `limit` less the seconds spent since the flow started (the success's clock runs).
    static func expectLifetime(_ token: TokenResponse, _ limit: Int, since start: Date, sourceLocation: SourceLocation = #_sourceLocation) {
        let spent = Int(Date().timeIntervalSince(start).rounded(.up))
        #expect(token.expires_in <= limit && token.expires_in >= limit - spent - 1, "expires_in \(token.expires_in), limit \(limit), \(spent) s spent",
                sourceLocation: sourceLocation)
    }

    @Test func expiresInIsTheMinimumOfTheChecksAndTheApplicationCap() async throws {
        try await TestServer.run { server in
            // PinCodeAttempts succeeds for 60 s; the application allows 3600 s.
            var start = Date()
            let pin = try await Self.pinClient(server)
            Self.expectLifetime(try await pin.obtainToken(scope: "accessRestricted"), 60, since: start)
            // No check: the application cap of 3600 s.
            start = Date()
            let registered = try await pin.obtainToken(scope: nil)
            Self.expectLifetime(registered, 3600, since: start)
            #expect(registered.scope == "RegisteredClient")
            // The application caps tokens at 30 s, below the check's 60 s.
            start = Date()
            let short = try await Self.pinClient(server, app: "com.sample.short", platform: "android")
            Self.expectLifetime(try await short.obtainToken(scope: "accessRestricted"), 30, since: start)
        }
    }

    @Test func aCodeIsUsedOnce() async throws {
        try await TestServer.run { server in
            let client = try await Self.pinClient(server)
            let authorization = try await client.authorize(scope: "accessRestricted")
            #expect(authorization.status == 302)
            #expect(authorization.header("Location")?.hasPrefix("https://mfpredirecturi?code=") == true)
            let code = try #require(ProtocolClient.code(from: authorization))
            let first = try await client.token(code: code)
            #expect(first.status == 200)
            #expect(first.header("Cache-Control") == "no-store")
            let second = try await client.token(code: code)
            #expect(second.status == 400)
            #expect(second.json?["error"] == "invalid_grant")
        }
    }

    @Test func clientAssertionsAreChecked() async throws {
        try await TestServer.run { server in
            let client = try await Self.pinClient(server)
            var other = try ProtocolClient(server)
            try await other.register()
            func freshCode() async throws -> String {
                try #require(ProtocolClient.code(from: try await client.authorize(scope: "accessRestricted")))
            }

            var code = try await freshCode()
            let foreignKey = try await client.token(code: code, assertion: try client.assertion(jti: code, signer: try ClientKeyPair()))
            #expect(foreignKey.status == 401)
            #expect(foreignKey.json?["error"] == "invalid_client")

            code = try await freshCode()
            let wrongSub = try await client.token(code: code, assertion: try client.assertion(jti: code, sub: other.clientID))
            #expect(wrongSub.status == 401)
            let unknownSub = try await client.token(code: code, assertion: try client.assertion(jti: code, sub: "no-such-client"))
            #expect(unknownSub.status == 401)

            code = try await freshCode()
            let old = Int64(Date().timeIntervalSince1970 * 1000) - 5 * 60_000
            let expired = try await client.token(code: code, assertion: try client.assertion(jti: code, iat: old))
            #expect(expired.status == 401)
            let tooLong = try await client.token(code: code, assertion: try client.assertion(jti: code, lifetime: 3_600_000))
            #expect(tooLong.status == 401)
            let wrongJTI = try await client.token(code: code, assertion: try client.assertion(jti: "another-code"))
            #expect(wrongJTI.status == 401)
            let wrongAudience = try await client.token(code: code, assertion: try client.assertion(jti: code, aud: "https://elsewhere/x"))
            #expect(wrongAudience.status == 401)
            let notJWS = try await client.token(code: code, assertion: "garbage")
            #expect(notJWS.status == 401)

            // The other client cannot redeem this client's code with its own valid assertion.
            let stolen = try await other.token(code: code, assertion: try other.assertion(jti: code))
            #expect(stolen.status == 400)
            #expect(stolen.json?["error"] == "invalid_grant")
            // Refused assertions did not use the code up... but the theft attempt did: the code is gone.
            let afterTheft = try await client.token(code: code)
            #expect(afterTheft.status == 400)

            let good = try await client.token(code: try await freshCode())
            #expect(good.status == 200)
        }
    }

    @Test func redirectURIsAreStrict() async throws {
        try await TestServer.run { server in
            let client = try await Self.pinClient(server)
            for uri in ["https://evil.example/cb", "https://mfpredirecturi/path", "https://mfpredirecturi?x=1", ""] {
                let response = try await client.authorize(scope: "accessRestricted", redirectURI: uri)
                #expect(response.status == 400, "\(uri)")
                #expect(response.json?["errorCode"] == "INVALID_REDIRECT_URI")
            }
            let code = try #require(ProtocolClient.code(from: try await client.authorize(scope: "accessRestricted")))
            let mismatch = try await client.token(code: code, redirectURI: "other://mfpredirecturi")
            #expect(mismatch.status == 400)
        }
    }

    @Test func webClientsFollowTheRedirectAndReadTheCode() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server, app: "com.sample.web", platform: "web")
            try await client.register()
            #expect(try await client.preauthorize(scope: nil).status == 200)
            let redirect = "\(server.baseURL)/mfp/api/az/v1/authorization/redirect/\(client.clientID!)"
            let authorization = try await client.authorize(scope: nil, redirectURI: redirect)
            #expect(authorization.status == 302)
            let location = try #require(authorization.header("Location"))
            let followed = try await HTTP.send(.GET, location)
            #expect(followed.status == 200)
            let code = try #require(followed.json?["code"]?.stringValue)
            let token = try await client.token(code: code, redirectURI: redirect)
            #expect(token.status == 200)
            // Another client's redirect path is refused.
            let foreign = try await client.authorize(scope: nil, redirectURI: "\(server.baseURL)/mfp/api/az/v1/authorization/redirect/someone-else")
            #expect(foreign.status == 400)
        }
    }

    @Test func authorizationNeedsTheChecksToHaveSucceeded() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let response = try await client.authorize(scope: "accessRestricted")
            #expect(response.status == 403)
            #expect(response.json?["errorCode"] == "ACCESS_DENIED")
        }
    }
}
