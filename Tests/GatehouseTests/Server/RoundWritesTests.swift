import Foundation
import GatehouseProtocol
import Testing

/// A round writes to the store only what it changed: the repeated rounds of an already-successful client write
/// nothing while the stored last activity is younger than a second; a change is always written at once.
@Suite(.timeLimit(.minutes(3))) struct RoundWritesTests {
    static func commits(_ server: TestServer) async throws -> Double {
        let text = String(decoding: try await HTTP.send(.GET, server.baseURL + "/metrics").body, as: UTF8.self)
        return MetricsTests.samples(text)[#"gatehouse_store_operation_duration_seconds_count{operation="commit"}"#] ?? 0
    }

    @Test(.timeLimit(.minutes(3))) func roundsThatChangeNothingWriteAtMostOncePerSecond() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server)
            try await client.register()
            #expect(try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]]).status == 200)

            let before = try await Self.commits(server)
            let start = ContinuousClock.now
            for _ in 0..<20 { #expect(try await client.preauthorize(scope: "accessRestricted").status == 200) }
            let elapsed = (ContinuousClock.now - start) / .seconds(1)
            let written = try await Self.commits(server) - before
            // The rule itself: the last activity is written anew only when it is a second old (or older).
            #expect(written <= elapsed.rounded(.down) + 1, "\(written) commits for 20 rounds in \(elapsed) s")

            // A change is written at once, within the same second: after a logout the check challenges again.
            #expect(try await client.logout(securityCheck: "PinCodeAttempts").status == 200)
            #expect(try await client.preauthorize(scope: "accessRestricted").status == 401)
            #expect(try await Self.commits(server) - before > written)
        }
    }
}
