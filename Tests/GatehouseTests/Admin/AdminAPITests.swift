import Foundation
import GatehouseProtocol
import NIOHTTP1
import Testing

/// The admin API: who may call it, and what each endpoint does.
@Suite(.timeLimit(.minutes(3))) struct AdminAPITests {
    /// Every endpoint: 401 without a token, 403 for a non-admin token, 403 for a read-only token on a write.
    @Test(.timeLimit(.minutes(3))) func everyEndpointRefusesCallersWithoutTheScope() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let reader = try await Admin.reader(server)
            let other = try await Admin.token(server, client: "balance-service", scope: "authorization.introspect")
            let reads: [String] = ["/registrations", "/registrations/someone", "/accounts", "/keys", "/policy", "/audit"]
            let writes: [(HTTPMethod, String)] = [
                (.DELETE, "/registrations/someone"), (.POST, "/registrations/someone/revoke"),
                (.POST, "/registrations/someone/checks/PinCodeAttempts/reset"), (.DELETE, "/accounts/user:john"),
                (.POST, "/keys"), (.POST, "/keys/some-kid/retire"),
            ]
            for (method, path) in reads.map({ (HTTPMethod.GET, $0) }) + writes {
                let none = try await Admin.send(method, server, path, token: nil)
                #expect(none.status == 401, "\(method) \(path)")
                #expect(none.header("WWW-Authenticate") == "Bearer")
                #expect(none.json?["errorCode"] == "UNAUTHORIZED")
                let bad = try await Admin.send(method, server, path, token: "not-a-token")
                #expect(bad.status == 401, "\(method) \(path)")
                #expect(bad.json?["errorMsg"]?.stringValue?.contains("not valid") == true)
                #expect(none.json?["errorMsg"]?.stringValue?.contains("needs a confidential client") == true)
                let foreign = try await Admin.send(method, server, path, token: other)
                #expect(foreign.status == 403, "\(method) \(path)")
                #expect(foreign.json?["errorCode"] == "FORBIDDEN")
            }
            for path in reads {
                let read = try await Admin.send(.GET, server, path, token: reader)
                #expect(read.status == (path == "/registrations/someone" ? 404 : 200), "GET \(path)")
            }
            for (method, path) in writes {
                let refused = try await Admin.send(method, server, path, token: reader)
                #expect(refused.status == 403, "\(method) \(path)")
                #expect(refused.header("WWW-Authenticate")?.contains("gatehouse.admin") == true)
            }
            // A mobile client's token is never an admin token.
            var client = try ProtocolClient(server)
            try await client.register()
            let mobile = try await client.obtainToken(scope: nil).access_token
            #expect(try await Admin.send(.GET, server, "/keys", token: mobile).status == 403)
        }
    }

    @Test(.timeLimit(.minutes(3))) func registrationsAreSearchedPagedAndDeleted() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let reader = try await Admin.reader(server)
            let writer = try await Admin.writer(server)
            var ids: [String] = []
            for index in 0..<7 {
                var client = try ProtocolClient(server, app: index < 5 ? "com.sample.pincodeswift" : "com.sample.short",
                                                platform: index < 5 ? "ios" : "android")
                try await client.register()
                ids.append(try #require(client.clientID))
            }
            var seen: [String] = []
            var next: String? = nil
            var pages = 0
            repeat {
                let page = try await Admin.send(.GET, server, "/registrations?limit=3" + (next.map { "&after=\($0)" } ?? ""), token: reader)
                #expect(page.status == 200)
                seen += page.json?["registrations"]?.arrayValue?.compactMap { $0["clientId"]?.stringValue } ?? []
                next = page.json?["next"]?.stringValue
                pages += 1
            } while next != nil && pages < 10
            #expect(pages == 3 && seen == ids.sorted())
            let short = try await Admin.send(.GET, server, "/registrations?application=com.sample.short", token: reader)
            #expect(Set(short.json?["registrations"]?.arrayValue?.compactMap { $0["clientId"]?.stringValue } ?? []) == Set(ids.suffix(2)))
            let byDevice = try await Admin.send(.GET, server, "/registrations?device=device-com.sample.short", token: reader)
            #expect(byDevice.json?["registrations"]?.arrayValue?.count == 2)
            #expect(try await Admin.send(.GET, server, "/registrations?limit=0", token: reader).status == 400)
            #expect(try await Admin.send(.GET, server, "/registrations?limit=x", token: reader).status == 400)

            let one = try await Admin.send(.GET, server, "/registrations/\(ids[0])", token: reader)
            #expect(one.status == 200)
            #expect(one.json?["application"]?["id"] == "com.sample.pincodeswift")
            #expect(one.json?["checks"]?.arrayValue?.contains { $0["check"] == "PinCodeAttempts" } == true)

            #expect(try await Admin.send(.DELETE, server, "/registrations/\(ids[0])", token: writer).status == 200)
            #expect(try await Admin.send(.GET, server, "/registrations/\(ids[0])", token: reader).status == 404)
            #expect(try await Admin.send(.DELETE, server, "/registrations/\(ids[0])", token: writer).status == 404)
            let rest = try await Admin.send(.GET, server, "/registrations", token: reader)
            #expect(rest.json?["registrations"]?.arrayValue?.count == 6)
        }
    }

    /// A blocked check shows as blocked with no attempts left; a reset unblocks it; a revoke ends its tokens.
    @Test(.timeLimit(.minutes(3))) func checkStatesAreShownResetAndTokensRevoked() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let writer = try await Admin.writer(server)
            var client = try ProtocolClient(server)
            try await client.register()
            let clientID = try #require(client.clientID)
            let wrong: [String: JSON] = ["PinLongBlock": ["pin": "0000"]]
            #expect(try await client.preauthorize(scope: "PinLongBlock").status == 401)
            #expect(try await client.preauthorize(scope: "PinLongBlock", answers: wrong).status == 401)
            func state() async throws -> JSON? {
                try await Admin.send(.GET, server, "/registrations/\(clientID)", token: writer).json?["checks"]?.arrayValue?
                    .first { $0["check"] == "PinLongBlock" }
            }
            let attempting = try await state()
            #expect(attempting?["state"] == "attempting" && attempting?["remainingAttempts"] == 2 && attempting?["maxAttempts"] == 3)
            #expect(try await client.preauthorize(scope: "PinLongBlock", answers: wrong).status == 401)
            #expect(try await client.preauthorize(scope: "PinLongBlock", answers: wrong).status == 403)
            let blocked = try await state()
            #expect(blocked?["state"] == "blocked" && blocked?["remainingAttempts"] == 0)
            #expect((blocked?["expiresAt"]?.intValue ?? 0) > Int(Date().timeIntervalSince1970 * 1000) + 500_000)
            #expect(try await client.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": "1234"]]).status == 403)

            let reset = try await Admin.send(.POST, server, "/registrations/\(clientID)/checks/PinLongBlock/reset", token: writer)
            #expect(reset.status == 200 && reset.json?["state"] == "expired")
            #expect(try await Admin.send(.POST, server, "/registrations/\(clientID)/checks/Nope/reset", token: writer).status == 404)
            #expect(try await Admin.send(.POST, server, "/registrations/nobody/checks/PinLongBlock/reset", token: writer).status == 404)
            #expect(try await client.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": "1234"]]).status == 200)

            let token = try await client.obtainToken(scope: "PinLongBlock").access_token
            let balance = server.baseURL + "/mfp/api/adapters/ResourceAdapter/unprotected"
            _ = balance
            let introspect = { () async throws -> JSON? in
                try await HTTP.postForm(server.baseURL + "/mfp/api/az/v1/introspection", [("token", token)],
                                        headers: [("Authorization", "Basic " + Data("balance-service:s3cret".utf8).base64EncodedString())]).json
            }
            #expect(try await introspect()?["active"] == true)
            #expect(try await Admin.send(.POST, server, "/registrations/\(clientID)/revoke", token: writer).status == 200)
            #expect(try await introspect()?["active"] == false)
            #expect(try await Admin.send(.POST, server, "/registrations/nobody/revoke", token: writer).status == 404)
        }
    }

    /// A source address locked by its failures (here this machine's: three wrong secrets) is listed with the
    /// accounts, and unlocked by an operator.
    @Test(.timeLimit(.minutes(3))) func lockedAccountsAreListedAndUnlocked() async throws {
        try await TestServer.run(policy: Admin.policy + "\nsourceThrottle: { threshold: 3, durationSec: 300 }\n") { server in
            let writer = try await Admin.writer(server)
            for _ in 0..<3 {
                await #expect(throws: TestFailure.self) { try await Admin.token(server, client: "balance-service", secret: "wrong", scope: "") }
            }
            await #expect(throws: TestFailure.self) { try await Admin.token(server, client: "balance-service", scope: "authorization.introspect") }
            let locked = try await Admin.send(.GET, server, "/accounts", token: writer)
            #expect(locked.status == 200)
            let accounts = locked.json?["accounts"]?.arrayValue ?? []
            #expect(accounts.map { $0["account"] } == ["source:127.0.0.1"])
            #expect((accounts.first?["lockedUntil"]?.intValue ?? 0) > Int(Date().timeIntervalSince1970 * 1000))
            #expect(try await Admin.send(.DELETE, server, "/accounts/source:127.0.0.1", token: writer).status == 200)
            #expect(try await Admin.send(.GET, server, "/accounts", token: writer).json?["accounts"]?.arrayValue?.isEmpty == true)
            #expect(try await Admin.send(.DELETE, server, "/accounts/source:127.0.0.1", token: writer).status == 404)
            // A bare name: 404, with how accounts are named.
            let bare = try await Admin.send(.DELETE, server, "/accounts/john", token: writer)
            #expect(bare.status == 404)
            #expect(bare.json?["errorMsg"]?.stringValue?.contains("user:<name>") == true)
            _ = try await Admin.token(server, client: "balance-service", scope: "authorization.introspect")
        }
    }

    @Test(.timeLimit(.minutes(3))) func signingKeysAreListedRotatedAndRetired() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let writer = try await Admin.writer(server)
            let before = try await Admin.send(.GET, server, "/keys", token: writer).json?["keys"]?.arrayValue ?? []
            #expect(before.count == 1 && before[0]["current"] == true && before[0]["algorithm"] == "ES256")
            #expect(before[0]["privateKeyPEM"] == nil)
            let oldKID = try #require(before[0]["kid"]?.stringValue)
            let rotated = try await Admin.send(.POST, server, "/keys", token: writer)
            #expect(rotated.status == 201)
            let newKID = try #require(rotated.json?["kid"]?.stringValue)
            let after = try await Admin.send(.GET, server, "/keys", token: writer).json?["keys"]?.arrayValue ?? []
            #expect(after.map { $0["kid"]?.stringValue } == [oldKID, newKID])
            #expect(after.map { $0["current"] } == [false, true])
            // The writer's own token was signed by the old key: retiring it ends that token.
            #expect(try await Admin.send(.POST, server, "/keys/\(newKID)/retire", token: writer).status == 409)
            #expect(try await Admin.send(.POST, server, "/keys/nope/retire", token: writer).status == 404)
            let first = try await Admin.send(.POST, server, "/keys/\(oldKID)/retire", token: writer)
            #expect(first.status == 200 && first.json?["alreadyRetired"] == false)
            #expect(try await Admin.send(.GET, server, "/keys", token: writer).status == 401)
            let fresh = try await Admin.writer(server)
            let retired = try await Admin.send(.GET, server, "/keys", token: fresh).json?["keys"]?.arrayValue ?? []
            #expect(retired.first?["retiredAt"]?.intValue != nil)
            // Again: answered alike, said so, and not audited twice.
            let again = try await Admin.send(.POST, server, "/keys/\(oldKID)/retire", token: fresh)
            #expect(again.status == 200 && again.json?["alreadyRetired"] == true)
            let audit = try await Admin.send(.GET, server, "/audit", token: fresh).json?["events"]?.arrayValue ?? []
            #expect(audit.filter { $0["event"]?.stringValue == "admin.key.retire" }.count == 1, "\(audit)")
        }
    }

    @Test(.timeLimit(.minutes(3))) func theEffectivePolicyIsReadWithoutSecrets() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let response = try await Admin.send(.GET, server, "/policy", token: try await Admin.reader(server))
            #expect(response.status == 200)
            let apps = response.json?["applications"]?.arrayValue ?? []
            let pincode = apps.first { $0["id"] == "com.sample.pincodeswift" }
            #expect(pincode?["scopeElementMapping"]?["accessRestricted"] == "PinCodeAttempts")
            #expect(pincode?["securityChecks"]?.arrayValue?.first { $0["name"] == "PinCodeAttempts" }?["maxAttempts"] == 3)
            #expect(response.json?["accountLockout"]?["threshold"] == 3)
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(!text.contains("1234") && !text.contains("$2b$"))
        }
    }
}
