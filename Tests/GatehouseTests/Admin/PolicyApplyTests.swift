import Foundation
import GatehouseProtocol
import Synchronization
import Testing

/// A policy applied through the admin API: checked first (nothing changes when it is wrong), stored as the next
/// version, in force at once on the node that took it and within the poll interval on every other node sharing the
/// store, kept across restarts — with no failed request while nodes switch.
@Suite(.timeLimit(.minutes(3))) struct PolicyApplyTests {
    /// The admin test policy with `PinDefaultBlock` allowing `attempts` attempts instead of 3 (and no throttle by
    /// address: the load below sends hundreds of wrong PINs from this machine).
    static func policy(pinDefaultBlockAttempts attempts: Int) -> String {
        let old = #"properties: { pinCode: "4321", maxAttempts: 3 }"#
        precondition(Admin.policy.contains(old))
        return Admin.policy.replacingOccurrences(of: old, with: #"properties: { pinCode: "4321", maxAttempts: \#(attempts) }"#)
            + "\nsourceThrottle: { threshold: 0 }\n"
    }

    static func apply(_ server: TestServer, _ yaml: String, token: String?) async throws -> TestResponse {
        try await HTTP.send(.PUT, server.baseURL + "/admin/v1/policy",
                            headers: [("Content-Type", "application/yaml")] + (token.map { [("Authorization", "Bearer \($0)")] } ?? []),
                            body: Data(yaml.utf8))
    }

    /// `maxAttempts` of `PinDefaultBlock` in the policy a node has in force (`GET /admin/v1/policy`).
    static func maxAttempts(_ server: TestServer, token: String) async throws -> Int? {
        let policy = try await Admin.send(.GET, server, "/policy", token: token)
        let app = policy.json?["applications"]?.arrayValue?.first { $0["id"] == "com.sample.pincodeswift" }
        let check = app?["securityChecks"]?.arrayValue?.first { $0["name"] == "PinDefaultBlock" }
        return check?["maxAttempts"]?.intValue
    }

    /// The remaining attempts a new client is told after one wrong PIN.
    static func remainingAfterOneWrongPIN(_ server: TestServer, key: ClientKeyPair) async throws -> Int? {
        var client = try ProtocolClient(server, key: key)
        try await client.register()
        _ = try await client.preauthorize(scope: "PinDefaultBlock")
        let wrong = try await client.preauthorize(scope: "PinDefaultBlock", answers: ["PinDefaultBlock": ["pin": "0000"]])
        return wrong.json?["challenges"]?["PinDefaultBlock"]?["remainingAttempts"]?.intValue
    }

    @Test func aWrongPolicyChangesNothingAndAGoodOneIsInForceAtOnceAndAfterARestart() async throws {
        let key = try ClientKeyPair()
        let directory = TestServer.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await TestServer.run(policy: Admin.policy, dataDirectory: directory) { server in
            let writer = try await Admin.writer(server)
            let reader = try await Admin.reader(server)

            // Refusals: no token, a read-only token, a non-admin token; the source is for writers only.
            #expect(try await Self.apply(server, Self.policy(pinDefaultBlockAttempts: 5), token: nil).status == 401)
            #expect(try await Self.apply(server, Self.policy(pinDefaultBlockAttempts: 5), token: reader).status == 403)
            let other = try await Admin.token(server, client: "balance-service", scope: "authorization.introspect")
            #expect(try await Self.apply(server, Self.policy(pinDefaultBlockAttempts: 5), token: other).status == 403)
            #expect(try await Admin.send(.GET, server, "/policy/source", token: reader).status == 403)

            let source = try await Admin.send(.GET, server, "/policy/source", token: writer)
            #expect(source.status == 200 && source.json?["version"] == 0 && source.json?["yaml"]?.stringValue == Admin.policy)

            // A policy with an error: 422 with the error by key, and nothing changes.
            let broken = Self.policy(pinDefaultBlockAttempts: 5).replacingOccurrences(of: "class: UserLogin", with: "class: NoSuchCheck")
            let refused = try await Self.apply(server, broken, token: writer)
            #expect(refused.status == 422 && refused.json?["errorCode"] == "INVALID_POLICY")
            #expect(refused.json?["errors"]?.arrayValue?.first?["key"]?.stringValue == "securityChecks.UserLogin.class")
            #expect(try await Self.apply(server, "applications: [", token: writer).status == 422)
            #expect(try await Self.maxAttempts(server, token: reader) == 3)
            #expect(try await Self.remainingAfterOneWrongPIN(server, key: key) == 2)

            // A good policy: version 1, in force for the next request.
            let applied = try await Self.apply(server, Self.policy(pinDefaultBlockAttempts: 5), token: writer)
            #expect(applied.status == 200 && applied.json?["applied"] == true && applied.json?["version"] == 1)
            #expect(try await Self.maxAttempts(server, token: reader) == 5)
            #expect(try await Self.remainingAfterOneWrongPIN(server, key: key) == 4)
            let again = try await Admin.send(.GET, server, "/policy/source", token: writer)
            #expect(again.json?["version"] == 1 && again.json?["yaml"]?.stringValue == Self.policy(pinDefaultBlockAttempts: 5))

            // The audit log names who applied which version (and who read the source), without the policy's text.
            let audit = try await Admin.send(.GET, server, "/audit?limit=1000", token: reader)
            let events = audit.json?["events"]?.arrayValue ?? []
            let named = events.map { [$0["event"]?.stringValue, $0["actor"]?.stringValue, $0["detail"]?.stringValue] }
            #expect(named.contains(["admin.policy.apply", "ops", "version 1"]))
            #expect(named.contains { $0[0] == "admin.policy.read" && $0[1] == "ops" })
            #expect(!String(decoding: audit.body, as: UTF8.self).contains("pinCode"))
        }
        // A restart with the old file keeps the applied policy: the store holds it.
        try await TestServer.run(policy: Admin.policy, dataDirectory: directory) { server in
            let reader = try await Admin.reader(server)
            #expect(try await Self.maxAttempts(server, token: reader) == 5)
            let remaining = try await Self.remainingAfterOneWrongPIN(server, key: key)
            #expect(remaining == 4)
        }
    }

    /// Counts the flows of the load and the requests that did not get the answer the protocol promises.
    final class Tally: Sendable {
        private let state = Mutex<(flows: Int, failures: [String], stopped: Bool)>((0, [], false))
        func flow() { state.withLock { $0.flows += 1 } }
        func stop() { state.withLock { $0.stopped = true } }
        var stopped: Bool { state.withLock { $0.stopped } }
        func failure(_ text: String) { state.withLock { $0.failures.append(text) } }
        var flows: Int { state.withLock { $0.flows } }
        var failures: [String] { state.withLock { $0.failures } }
    }

    /// One flow: register, open the PIN challenge, answer wrong (the remaining attempts come from either policy),
    /// answer right.
    static func flow(_ server: TestServer, key: ClientKeyPair, tally: Tally) async {
        do {
            var client = try ProtocolClient(server, key: key)
            try await client.register()
            let open = try await client.preauthorize(scope: "PinDefaultBlock")
            guard open.status == 401 else { return tally.failure("open: \(open.status)") }
            let wrong = try await client.preauthorize(scope: "PinDefaultBlock", answers: ["PinDefaultBlock": ["pin": "0000"]])
            let remaining = wrong.json?["challenges"]?["PinDefaultBlock"]?["remainingAttempts"]?.intValue
            guard wrong.status == 401, remaining == 2 || remaining == 4 else {
                return tally.failure("wrong PIN: \(wrong.status) \(String(decoding: wrong.body, as: UTF8.self).prefix(200))")
            }
            let right = try await client.preauthorize(scope: "PinDefaultBlock", answers: ["PinDefaultBlock": ["pin": "4321"]])
            guard right.status == 200 else { return tally.failure("right PIN: \(right.status)") }
            tally.flow()
        } catch {
            tally.failure("\(error)")
        }
    }

    /// Flows by four clients at a time over both nodes (bounded: 400 flows or 60 s each) while `change` runs, from a
    /// second after the load starts to a second before it stops: the flows counted and the requests that failed.
    static func underLoad(_ nodes: [TestServer], key: ClientKeyPair, _ change: () async throws -> Void) async throws -> Tally {
        let tally = Tally()
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for round in 0..<400 where !tally.stopped && ContinuousClock.now - start < .seconds(60) {
                        await Self.flow(nodes[(worker + round) % 2], key: key, tally: tally)
                    }
                }
            }
            try await Task.sleep(for: .seconds(1))
            do {
                try await change()
            } catch {
                tally.stop()
                throw error
            }
            try await Task.sleep(for: .seconds(1))
            tally.stop()
            try await group.waitForAll()
        }
        return tally
    }

    @Test func aPolicyAppliedOnOneNodeChangesMaxAttemptsOnBothWithoutAFailedRequestUnderLoad() async throws {
        try await NodeCluster.run(policy: Self.policy(pinDefaultBlockAttempts: 3)) { cluster in
            let nodes = cluster.nodes
            let key = try ClientKeyPair()
            let writer = try await Admin.writer(nodes[0])
            let reader = try await Admin.reader(nodes[1])
            #expect(try await Self.maxAttempts(nodes[1], token: reader) == 3)

            let tally = try await Self.underLoad(nodes, key: key) {
                let applied = try await Self.apply(nodes[0], Self.policy(pinDefaultBlockAttempts: 5), token: writer)
                #expect(applied.status == 200 && applied.json?["version"] == 1)
                #expect(try await Self.maxAttempts(nodes[0], token: reader) == 5, "in force at once on the node that took it")
                // The other node follows within its poll interval (2 s), while the load goes on.
                var followed = false
                for _ in 0..<100 where !followed {
                    followed = try await Self.maxAttempts(nodes[1], token: reader) == 5
                    if !followed { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(followed, "the second node took the policy")
            }
            #expect(tally.failures.isEmpty, "failed requests during the switch: \(tally.failures.prefix(5))")
            #expect(tally.flows >= 8, "the load ran (\(tally.flows) flows)")
            // Both nodes now count attempts with the new maximum.
            for node in nodes { #expect(try await Self.remainingAfterOneWrongPIN(node, key: key) == 4) }
        }
    }

    /// Application management on two nodes (issue 38): a version disabled through node A is refused on node B within
    /// the poll interval, while the load of another version goes on without a failed request.
    @Test func aVersionDisabledThroughOneNodeIsRefusedOnBothWithoutAFailedRequestUnderLoad() async throws {
        let base = Self.policy(pinDefaultBlockAttempts: 3)
        let app = "scopeElementMapping: { accessRestricted: PinCodeAttempts, both: \"SimpleCaptcha PinCodeAttempts\", open: \"\" }"
        precondition(base.contains(app))
        let disabling = base.replacingOccurrences(of: app, with: app + """

                versions: [{ versions: "2.0", status: disabled, message: "Version 2.0 is withdrawn.", downloadLink: "https://apps.example.com" }]
            """)
        try await NodeCluster.run(policy: base) { cluster in
            let nodes = cluster.nodes
            let key = try ClientKeyPair()
            let writer = try await Admin.writer(nodes[0])
            var withdrawn = try ProtocolClient(nodes[1], version: "2.0")
            try await withdrawn.register()
            #expect(try await withdrawn.preauthorize(scope: "accessRestricted").status == 401, "served before")
            let tally = try await Self.underLoad(nodes, key: key) {
                let applied = try await Self.apply(nodes[0], disabling, token: writer)
                #expect(applied.status == 200)
                var refused = false
                for _ in 0..<100 where !refused {
                    let answer = try await withdrawn.preauthorize(scope: "accessRestricted")
                    refused = answer.status == 403 && answer.json?["failures"]?["wl_remoteDisableRealm"]?["message"] == "Version 2.0 is withdrawn."
                    if !refused { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(refused, "node B refused the withdrawn version within the poll interval")
            }
            #expect(tally.failures.isEmpty, "failed requests during the switch: \(tally.failures.prefix(5))")
            #expect(tally.flows >= 8, "the load ran (\(tally.flows) flows)")
            let view = try await Admin.send(.GET, nodes[1], "/policy", token: writer)
            let versions = view.json?["applications"]?.arrayValue?.first { $0["id"] == "com.sample.pincodeswift" }?["versions"]?.arrayValue
            #expect(versions?.first?["status"] == "disabled" && versions?.first?["versions"] == "2.0", "\(String(describing: versions))")
        }
    }
}
