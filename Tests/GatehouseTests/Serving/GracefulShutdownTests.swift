import Foundation
import GatehouseGateway
import GatehouseProtocol
import HummingbirdWSClient
import Testing

/// SIGTERM stops `gatehouse serve` gracefully: it stops accepting, and every request already in flight is
/// answered in full before the process exits 0.
@Suite(.timeLimit(.minutes(3))) struct GracefulShutdownTests {
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

    @Test func aSIGTERMClosesTheGatewaysWebSocketsWithGoingAway() async throws {
        let gateway = try GatehouseProcess.start(["gateway", "--port", "0", "--log-level", "warning"])
        defer { if gateway.process.isRunning { gateway.process.terminate() } }
        let banner = try await gateway.waitForLine(containing: "listens on http://")
        let base = try #require(banner.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init))
        let url = base.replacingOccurrences(of: "http://", with: "ws://") + "/echo"
        let pid = gateway.process.processIdentifier
        let close = try await WebSocketClient.connect(
            url: url, configuration: .init(additionalHeaders: [.authorization: "Basic " + Data("joe:welcome".utf8).base64EncodedString()]),
            logger: GatewayFixture.logger
        ) { inbound, outbound, _ in
            try await outbound.write(.text("before the signal"))
            var iterator = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
            guard case .text(let echoed)? = try await iterator.next() else { throw TestFailure("no echo") }
            #expect(echoed.contains("before the signal"))
            kill(pid, SIGTERM)
            // Read until the gateway closes (bounded by the suite's time limit and the closing handshake's timeout).
            while try await iterator.next() != nil {}
        }
        #expect(close?.closeCode == .goingAway, "closed with \(String(describing: close?.closeCode)), not 1001")
        #expect(try await gateway.waitForExit(seconds: 30) == 0)
    }
}
