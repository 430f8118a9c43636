import Foundation
import GatehouseGateway
import GatehouseProtocol
import Testing

/// SIGTERM stops `gatehouse serve` gracefully: it stops accepting, and every request already in flight is
/// answered in full before the process exits 0.
@Suite(.timeLimit(.minutes(2))) struct GracefulShutdownTests {
    @Test func requestsInFlightDuringASIGTERMAreAllAnswered() async throws {
        // Slow requests (bcrypt at cost 12 per login) so that they are surely in flight when the signal comes.
        let hash = GatewayUser.hashing(username: "john", password: "demo", cost: 12).passwordHash
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let policyPath = directory + "/policy.yaml"
        try """
            registrationThrottle: { perAddress: 0 }
            securityChecks: { UserLogin: { class: UserLogin, properties: { maxAttempts: 3 } } }
            applications: [{ id: com.sample.pincodeswift, platform: ios }]
            users: [{ username: john, passwordHash: "\(hash)" }]
            """.write(toFile: policyPath, atomically: true, encoding: .utf8)
        let server = try GatehouseProcess.start(["serve", "--port", "0", "--data", directory, "--policy", policyPath, "--log-level", "warning"])
        defer { if server.process.isRunning { server.process.terminate() } }
        let banner = try await server.waitForLine(containing: "listens on http://")
        let base = try #require(banner.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init))
        let portText = base.split(separator: ":").last.map(String.init) ?? ""
        let port = try #require(Int(portText))
        let testServer = TestServer(port: port, dataDirectory: directory)

        let key = try ClientKeyPair()
        var clients: [ProtocolClient] = []
        for _ in 0..<8 {
            var client = try ProtocolClient(testServer, key: key)
            try await client.register()
            clients.append(client)
        }
        var connections: [RawHTTPConnection] = []
        for client in clients {
            let body = try JSONEncoder().encode(PreauthorizeRequest(
                clientID: client.clientID ?? "", scope: "UserLogin", challengeResponse: ["UserLogin": ["username": "john", "password": "demo"]]))
            let connection = try RawHTTPConnection(port: port, timeout: .seconds(30))
            let head = "POST /mfp/api/preauth/v1/preauthorize HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
            #expect(await connection.send(Array(head.utf8) + [UInt8](body)))
            connections.append(connection)
        }
        try await Task.sleep(for: .milliseconds(60))
        kill(server.process.processIdentifier, SIGTERM)

        var statuses: [Int] = []
        for connection in connections {
            statuses.append(await connection.readResponse()?.status ?? -1)
        }
        #expect(statuses == Array(repeating: 200, count: connections.count), "\(statuses)")
        #expect(try await server.waitForExit(seconds: 30) == 0)
        // Nothing listens any more.
        #expect(throws: (any Error).self) { try RawHTTPConnection(port: port, timeout: .seconds(2)) }
    }
}
