import Foundation
import GatehouseProtocol
import GatehouseSQLite
import GatehouseStore
import Testing

/// Moving a deployment (issue 40): clients registered, blocked and remembered on the embedded SQLite store are served
/// by two PostgreSQL nodes after `gatehouse store copy`, without registering again; the copy is refused into a store
/// that holds rows, finished by running it again, and goes back the other way; `store backup` and `restore`.
@Suite(.timeLimit(.minutes(3))) struct StoreCopyTests {
    /// A PIN block that lasts (600 s) and a login success of 1 s with a minute of remember-me.
    static let policy = TestPolicies.standard.replacingOccurrences(
        of: "blockedStateExpirationSec: 2, successStateExpirationSec: 60", with: "blockedStateExpirationSec: 600, successStateExpirationSec: 60")

    static func gatehouse(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await runOffThePool(GatehouseProcess.executable.path, arguments)
    }

    @Test func clientsRegisteredOnSQLiteAreServedByTwoPostgreSQLNodesAfterACopy() async throws {
        #expect(Self.policy != TestPolicies.standard)
        let directory = TestServer.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // On SQLite: one client blocked by wrong PINs, one with a token and john remembered.
        let nowhere = TestServer(port: 1, dataDirectory: "")
        var blocked = try ProtocolClient(nowhere, device: "blocked-phone"), remembered = try ProtocolClient(nowhere, device: "remembered-phone")
        let (token, before) = try await TestServer.run(policy: Self.policy, dataDirectory: directory) { server in
            blocked.move(to: server)
            remembered.move(to: server)
            try await blocked.register()
            for _ in 0..<3 { _ = try await blocked.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "0000"]]) }
            #expect(try await blocked.preauthorize(scope: "accessRestricted").status == 403, "blocked on SQLite")
            try await remembered.register()
            _ = try await remembered.preauthorize(scope: "accessRestricted")
            #expect(try await remembered.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]]).status == 200)
            let token = try await remembered.obtainToken(scope: "accessRestricted").access_token
            let login = try await remembered.preauthorize(
                scope: "UserLogin", answers: ["UserLogin": ["username": "john", "password": "demo", "rememberMe": true]])
            #expect(login.status == 200)
            #expect(try await MultiNodeTests.balance(server, token: token).status == 200)
            return (token, try await blocked.preauthorize(scope: "accessRestricted").json?["failures"])
        }
        #expect(before != nil)

        try await NodeCluster.run(nodes: 0, policy: Self.policy) { cluster in
            let url = TestPostgres.url(of: cluster.location)
            let copied = try await Self.gatehouse(["store", "copy", "--from", directory, "--to", url])
            #expect(copied.status == 0, "\(copied.output)")
            #expect(copied.output.contains("registrations: 2 read, 2 new") && copied.output.contains("counts and samples agree"), "\(copied.output)")
            #expect(!copied.output.contains(token.prefix(40)), "no secret printed")

            // Into a store that holds rows: refused, unless told (then nothing is copied twice).
            let again = try await Self.gatehouse(["store", "copy", "--from", directory, "--to", url])
            #expect(again.status != 0 && again.output.contains("holds rows already"), "\(again.output)")
            let finished = try await Self.gatehouse(["store", "copy", "--from", directory, "--to", url, "--into-non-empty"])
            #expect(finished.status == 0 && finished.output.contains("registrations: 2 read, 0 new"), "\(finished.output)")

            let a = try await cluster.startNode(), b = try await cluster.startNode()
            blocked.move(to: a)
            remembered.move(to: b)
            // No registration again: the blocked client is still blocked (its state came along), on either node.
            let stillBlocked = try await blocked.preauthorize(scope: "accessRestricted")
            #expect(stillBlocked.status == 403 && stillBlocked.json?["failures"] == before, "\(String(decoding: stillBlocked.body, as: UTF8.self))")
            blocked.move(to: b)
            #expect(try await blocked.preauthorize(scope: "accessRestricted").status == 403)
            // The token issued on SQLite verifies on both nodes (the signing keys came along).
            #expect(try await MultiNodeTests.balance(a, token: token).status == 200)
            #expect(try await MultiNodeTests.balance(b, token: token).status == 200)
            // john is remembered: his 1-second success has expired, and no credentials are asked.
            try await Task.sleep(for: .milliseconds(1100))
            let login = try await remembered.preauthorize(scope: "UserLogin")
            #expect(login.status == 200, "\(String(decoding: login.body, as: UTF8.self))")
            // New rows take new ids after the copied ones (the revocations' and audit log's sequences moved past them):
            // a logout stores a revocation, and the token stops working.
            #expect(try await remembered.logout(securityCheck: "PinCodeAttempts").status == 200)
            #expect(try await MultiNodeTests.balance(b, token: token).status == 401)

            // And back: PostgreSQL into a new embedded store, the same rows.
            let back = TestServer.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: back) }
            let returned = try await Self.gatehouse(["store", "copy", "--from", url, "--to", back])
            #expect(returned.status == 0, "\(returned.output)")
            let store = try SQLiteStore.open(dataDirectory: back)
            #expect(try await store.registration(clientID: try #require(blocked.clientID)) != nil)
            #expect(try await store.count(of: try #require(StoreTable.copied.first { $0.name == "client_states" })) >= 3)
        }
    }

    @Test func aBackupIsConsistentWhileServingAndRestoresInPlace() async throws {
        let directory = TestServer.temporaryDirectory()
        let restored = TestServer.temporaryDirectory()
        let backup = directory + "-backup.sqlite"
        defer {
            for path in [directory, restored, backup] { try? FileManager.default.removeItem(atPath: path) }
        }
        var client = try ProtocolClient(TestServer(port: 1, dataDirectory: ""))
        try await TestServer.run(dataDirectory: directory) { server in
            client.move(to: server)
            try await client.register()
            // Backed up while it serves.
            let made = try await Self.gatehouse(["store", "backup", "--data", directory, backup])
            #expect(made.status == 0, "\(made.output)")
            let refused = try await Self.gatehouse(["store", "backup", "--data", directory, backup])
            #expect(refused.status != 0 && refused.output.contains("exists"), "an existing file is never overwritten: \(refused.output)")
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: backup)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try await Self.gatehouse(["store", "restore", "--data", restored, "/nonexistent.sqlite"]).status != 0)
        let notAStore = restored + "-junk"
        try "not a database".write(toFile: notAStore, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: notAStore) }
        let junk = try await Self.gatehouse(["store", "restore", "--data", restored, notAStore])
        #expect(junk.status != 0 && junk.output.contains("not a Gatehouse store"), "\(junk.output)")
        let put = try await Self.gatehouse(["store", "restore", "--data", restored, backup])
        #expect(put.status == 0, "\(put.output)")
        #expect(try await Self.gatehouse(["store", "restore", "--data", restored, backup]).status != 0, "no replacing unless told")
        #expect(try await Self.gatehouse(["store", "restore", "--data", restored, "--replace", backup]).status == 0)
        // The restored store serves the client without a new registration.
        try await TestServer.run(dataDirectory: restored) { server async throws in
            client.move(to: server)
            #expect(try await client.preauthorize(scope: "accessRestricted").status == 401, "a PIN challenge, not INVALID_CLIENT_ID")
        }
    }
}
