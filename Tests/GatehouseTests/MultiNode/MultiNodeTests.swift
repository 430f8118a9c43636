import Foundation
import GatehousePostgres
import GatehouseProtocol
import GatehouseServer
import Testing

/// Two Gatehouse nodes on one PostgreSQL database behave as one server.
@Suite(.timeLimit(.minutes(3))) struct MultiNodeTests {
    static func balance(_ server: TestServer, token: String) async throws -> TestResponse {
        try await HTTP.send(.GET, server.baseURL + "/mfp/api/adapters/ResourceAdapter/balance", headers: [("Authorization", "Bearer " + token)])
    }

    static func kid(of token: String) -> String? { PersistenceTests.kid(of: token) }

    @Test func aClientRegistersOnOneNodeAnswersOnTheOtherAndUsesItsTokenOnBoth() async throws {
        try await NodeCluster.run { cluster in
            let (a, b) = (cluster.nodes[0], cluster.nodes[1])
            var client = try ProtocolClient(a)
            try await client.register()

            client.move(to: b)
            let challenge = try await client.preauthorize(scope: "accessRestricted")
            #expect(challenge.status == 401)
            #expect(challenge.json?["challenges"]?["PinCodeAttempts"] == ["errorMsg": nil, "remainingAttempts": 3])
            let answered = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]])
            #expect(answered.status == 200)

            client.move(to: a)
            let token = try await client.obtainToken(scope: "accessRestricted")

            let onB = try await Self.balance(b, token: token.access_token)
            #expect(onB.status == 200)
            #expect(String(decoding: onB.body, as: UTF8.self) == "19938.80")
            #expect(try await Self.balance(a, token: token.access_token).status == 200)

            // A code issued by one node is exchanged on the other, once.
            let authorization = try await client.authorize(scope: "accessRestricted")
            let code = try #require(ProtocolClient.code(from: authorization))
            client.move(to: b)
            #expect(try await client.token(code: code).status == 200)
            client.move(to: a)
            let reuse = try await client.token(code: code)
            #expect(reuse.status == 400)
            #expect(reuse.json?["error"] == "invalid_grant")
        }
    }

    /// (The throttle by address is off: every answer here comes from this machine, and this counts one registration's.)
    @Test func aHundredConcurrentWrongPINsOverBothNodesConsumeExactlyMaxAttempts() async throws {
        try await NodeCluster.run(policy: TestPolicies.standard + "\nsourceThrottle: { threshold: 0 }\n") { cluster in
            let nodes = cluster.nodes
            var client = try ProtocolClient(nodes[0])
            try await client.register()
            #expect(try await client.preauthorize(scope: "PinLongBlock").status == 401)
            let registered = client
            let responses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for index in 0..<100 {
                    var sender = registered
                    sender.move(to: nodes[index % 2])
                    let frozen = sender
                    group.addTask { try await frozen.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": "9999"]]) }
                }
                return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
            }
            let statuses = Dictionary(grouping: responses, by: \.status).mapValues(\.count)
            #expect(responses.allSatisfy { [401, 403, 409].contains($0.status) }, "no 5xx: \(statuses)")
            #expect(responses.filter { $0.status == 409 }.allSatisfy { $0.header(ProtocolNames.conflictHeader) != nil })
            let remaining = responses.filter { $0.status == 401 }
                .compactMap { $0.json?["challenges"]?["PinLongBlock"]?["remainingAttempts"]?.intValue }.sorted()
            #expect(remaining == [1, 2], "exactly two wrong answers counted before the block: \(statuses)")
            #expect(responses.filter { $0.status == 403 }.allSatisfy { $0.json?["failures"] == ["PinLongBlock": ["failure": "Account blocked"]] })
            #expect(statuses[403, default: 0] >= 1, "the third wrong answer blocked the client")

            // After the block no answer is accepted on any node, right ones included, sent together.
            let after = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for index in 0..<20 {
                    var sender = registered
                    sender.move(to: nodes[index % 2])
                    let frozen = sender
                    let pin = index % 2 == 0 ? "1234" : "0000"
                    group.addTask { try await frozen.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": .string(pin)]]) }
                }
                return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
            }
            #expect(after.allSatisfy { $0.status == 403 || $0.status == 409 }, "\(after.map(\.status))")
            for node in nodes {
                var sender = registered
                sender.move(to: node)
                let right = try await sender.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": "1234"]])
                #expect(right.status == 403)
                #expect(try await sender.authorize(scope: "PinLongBlock").status == 403)
            }
        }
    }

    @Test func anAssertionUsedOnOneNodeIsRefusedByTheOther() async throws {
        try await NodeCluster.run { cluster in
            let (a, b) = (cluster.nodes[0], cluster.nodes[1])
            var client = try ProtocolClient(a)
            try await client.register()
            // One logout request, caught on its way and sent again to the other node.
            let form = [("security_check", "PinCodeAttempts"), ("client_assertion_type", ClientAssertionClaims.assertionType),
                        ("client_assertion", try client.assertion(jti: nil, aud: nil))]
            #expect(try await HTTP.postForm(client.api + "/preauth/v1/logout", form).status == 200)
            client.move(to: b)
            let replay = try await HTTP.postForm(client.api + "/preauth/v1/logout", form)
            #expect(replay.status == 401, "\(String(decoding: replay.body, as: UTF8.self))")
            #expect(String(decoding: replay.body, as: UTF8.self).contains("used already"))
            // A new assertion of the same client still works there.
            #expect(try await client.logout(securityCheck: "PinCodeAttempts").status == 200)
        }
    }

    @Test func aRevocationOnOneNodeReachesTheOther() async throws {
        try await NodeCluster.run { cluster in
            let (a, b) = (cluster.nodes[0], cluster.nodes[1])
            var client = try ProtocolClient(a)
            try await client.register()
            _ = try await client.preauthorize(scope: "accessRestricted")
            #expect(try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]]).status == 200)
            let token = try await client.obtainToken(scope: "accessRestricted")
            #expect(try await Self.balance(b, token: token.access_token).status == 200, "B has verified and cached the token")

            #expect(try await client.logout(securityCheck: "PinCodeAttempts").status == 200)
            #expect(try await Self.balance(a, token: token.access_token).status == 401, "at once on the node that revoked")
            let start = ContinuousClock.now
            var refusedOnB = false
            // About a poll interval (1 s) when the machine is idle; more when the rest of the suite hogs the CPU.
            while ContinuousClock.now - start < .seconds(20) {
                if try await Self.balance(b, token: token.access_token).status == 401 {
                    refusedOnB = true
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(refusedOnB, "B refuses the token once it has polled the store")
        }
    }

    /// A device marked lost through node A's admin API: its next round on node B is refused at once (the hold is
    /// read with the client), its token stops opening B's resources once B has polled the revocations, and another
    /// device is served by both throughout; set active again, B serves it at its next round.
    @Test func aDeviceMarkedLostThroughOneNodeIsRefusedByTheOther() async throws {
        try await NodeCluster.run(policy: Admin.policy) { cluster in
            let (a, b) = (cluster.nodes[0], cluster.nodes[1])
            var lost = try ProtocolClient(a, device: "mn-lost-phone"), other = try ProtocolClient(a, device: "mn-other-phone")
            var tokens: [String] = []
            for client in [lost, other] {
                var client = client
                try await client.register()
                _ = try await client.preauthorize(scope: "accessRestricted")
                #expect(try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]]).status == 200)
                tokens.append(try await client.obtainToken(scope: "accessRestricted").access_token)
                if client.device == lost.device { lost = client } else { other = client }
            }
            #expect(try await Self.balance(b, token: tokens[0]).status == 200, "B has verified and cached the token")

            let writer = try await Admin.writer(a)
            let marked = try await DevicesAdminTests.put(a, "mn-lost-phone", #"{"status":"LOST"}"#, token: writer)
            #expect(marked.status == 200)
            lost.move(to: b)
            other.move(to: b)
            let refused = try await lost.preauthorize(scope: "accessRestricted")
            #expect(refused.status == 403 && refused.json?["failures"]?[DeviceAccessWire.failureName]?["status"] == "LOST", "at once on B")
            #expect(try await other.preauthorize(scope: "accessRestricted").status == 200, "another device is served")
            let start = ContinuousClock.now
            var revokedOnB = false
            while ContinuousClock.now - start < .seconds(20) {
                if try await Self.balance(b, token: tokens[0]).status == 401 {
                    revokedOnB = true
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(revokedOnB, "B refuses the lost device's token once it has polled the revocations")
            #expect(try await Self.balance(b, token: tokens[1]).status == 200)

            #expect(try await DevicesAdminTests.put(a, "mn-lost-phone", #"{"status":"ACTIVE"}"#, token: writer).status == 200)
            #expect(try await lost.preauthorize(scope: "accessRestricted").status != 403, "active again: served by B")
        }
    }

    @Test func aKeyRotatedOnOneNodeIsAcceptedEverywhereAndOldTokensStillHold() async throws {
        try await NodeCluster.run { cluster in
            let (a, b) = (cluster.nodes[0], cluster.nodes[1])
            var client = try ProtocolClient(a)
            try await client.register()
            _ = try await client.preauthorize(scope: "accessRestricted")
            _ = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]])
            let old = try await client.obtainToken(scope: "accessRestricted")

            // An operator rotates (as `gatehouse serve --rotate-signing-key` does), then a node starts with it.
            let admin = try await PostgresStore.connect(cluster.location, logger: TestPostgres.logger)
            let newKID = try await TokenSigner.rotate(in: admin)
            await admin.shutdown()
            let c = try await cluster.startNode()
            client.move(to: c)
            let new = try await client.obtainToken(scope: "accessRestricted")
            #expect(Self.kid(of: new.access_token) == newKID)
            #expect(Self.kid(of: old.access_token) != newKID)

            // A and B did not know the new key: they fetch it on its unknown kid. Every node takes both tokens.
            for node in [a, b, c] {
                #expect(try await Self.balance(node, token: new.access_token).status == 200)
                #expect(try await Self.balance(node, token: old.access_token).status == 200)
            }
            // A token under a known kid with a wrong signature is still refused.
            let forged = try #require(new.access_token.split(separator: ".").first).description
            #expect(try await Self.balance(a, token: forged + ".e30.c2ln").status == 401)
        }
    }
}
