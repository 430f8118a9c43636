import Foundation
import GatehouseProtocol
import Testing

/// A restarted server keeps registrations, check states and keys.
@Suite(.timeLimit(.minutes(3))) struct PersistenceTests {
    static func kid(of token: String) -> String? {
        let header = token.split(separator: ".").first.flatMap { Base64URL.decode($0) }
        return header.flatMap { try? JSONDecoder().decode(JSON.self, from: $0) }?["kid"]?.stringValue
    }

    @Test func aRestartedServerKeepsRegistrationsStatesAndKeys() async throws {
        let directory = TestServer.temporaryDirectory()
        let (client, kid) = try await TestServer.run(dataDirectory: directory) { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let token = try await client.obtainToken(scope: nil)
            _ = try await client.preauthorize(scope: "PinLongBlock")
            for _ in 0..<3 { _ = try await client.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": "0"]]) }
            #expect(try await client.preauthorize(scope: "PinLongBlock").status == 403)
            _ = try await client.preauthorize(scope: "accessRestricted")
            _ = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "0"]])
            return (client, try #require(Self.kid(of: token.access_token)))
        }
        try await TestServer.run(dataDirectory: directory) { server in
            var restarted = client
            restarted.move(to: server)
            // Still registered, still blocked, still one attempt down.
            let blocked = try await restarted.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": "1234"]])
            #expect(blocked.status == 403)
            #expect(blocked.json?["failures"] == ["PinLongBlock": ["failure": "Account blocked"]])
            let attempts = try await restarted.preauthorize(scope: "accessRestricted")
            #expect(attempts.json?["challenges"]?["PinCodeAttempts"]?["remainingAttempts"] == 2)
            // Same signing key.
            let token = try await restarted.obtainToken(scope: nil)
            #expect(Self.kid(of: token.access_token) == kid)
        }
    }
}
