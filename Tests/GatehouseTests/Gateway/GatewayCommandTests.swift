import Foundation
import Testing

/// `gatehouse gateway` (its demo: an echo service behind "Demo Realm") and `gatehouse echo`, the seed's WebSocket
/// client, run as processes and driven through standard input like a person at a terminal.
@Suite(.timeLimit(.minutes(3)), .enabled(if: DemoRun.isBuilt, "needs the built gatehouse executable (swift build)"))
struct GatewayCommandTests {
    /// Starts the demo gateway on a free port and returns it with its WebSocket URL.
    static func withDemoGateway(_ body: (_ url: String, _ base: String) async throws -> Void) async throws {
        let gateway = try DemoRun(["gateway", "--port", "0", "--log-level", "warning"])
        defer { gateway.stop() }
        let banner = try await gateway.expect("Stop with Ctrl-C.")
        let line = try #require(banner.split(separator: "\n").first { $0.hasPrefix("Gatehouse gateway listens on http://") })
        let base = String(line.dropFirst("Gatehouse gateway listens on ".count))
        try await body(base.replacingOccurrences(of: "http://", with: "ws://") + "/echo", base)
    }

    @Test func theEchoDemoLogsInAndEchoesLines() async throws {
        try await Self.withDemoGateway { url, base in
            let unauthenticated = try await HTTP.send(.GET, base + "/echo/x")
            #expect(unauthenticated.status == 401)
            #expect(unauthenticated.header("WWW-Authenticate") == "Application Basic realm=\"Demo Realm\"")

            let demo = try DemoRun(["echo", "--url", url])
            defer { demo.stop() }
            try await demo.expect("Login required: Demo Realm")
            try await demo.expect("Username:")
            demo.type("joe")
            try await demo.expect("Password:")
            demo.type("welcome")
            try await demo.expect("Connected.")
            demo.type("hello gateway")
            try await demo.expect("echo: hello gateway")
            demo.type("second line")
            try await demo.expect("echo: second line")
            demo.endInput()
            try await demo.expect("Disconnected.")
            #expect(try await demo.exitStatus() == 0)
        }
    }

    @Test func theEchoDemoGivesUpAfterTwoWrongTries() async throws {
        try await Self.withDemoGateway { url, _ in
            let demo = try DemoRun(["echo", "--url", url])
            defer { demo.stop() }
            for _ in 0..<2 {
                try await demo.expect("Username:")
                demo.type("joe")
                try await demo.expect("Password:")
                demo.type("not-the-password")
            }
            try await demo.expect("Gave up: gave up on \(url) after 2 refused tries")
            #expect(try await demo.exitStatus() == 1)
            #expect(!demo.text.contains("Connected."))
        }
    }

    @Test func theEchoDemoTellsAUserWithoutTheRoleAtOnce() async throws {
        try await Self.withDemoGateway { url, _ in
            let demo = try DemoRun(["echo", "--url", url])
            defer { demo.stop() }
            try await demo.expect("Username:")
            demo.type("ann")
            try await demo.expect("Password:")
            demo.type("secret")
            // Right password, no AUTHORIZED role: refused with 403, not asked to log in again.
            try await demo.expect("Refused: WebSocket handshake refused with 403")
            #expect(try await demo.exitStatus() == 1)
            #expect(demo.text.components(separatedBy: "Username:").count == 2, "\(demo.text)")
        }
    }

    @Test func theEchoDemoSaysInWordsWhenNoGatewayIsThere() async throws {
        // Port 1 on loopback: nothing listens.
        let demo = try DemoRun(["echo", "--url", "ws://127.0.0.1:1/echo"])
        defer { demo.stop() }
        _ = try await demo.expect("Cannot reach ws://127.0.0.1:1/echo: connection refused")
        #expect(try await demo.exitStatus() == 1)
        #expect(!demo.text.contains("errno"))
    }

    @Test func aWrongConfigurationStopsTheGatewayWithTheFileAndTheProblem() async throws {
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/gateway.yaml"
        try """
            realms: []
            services:
              - { name: echo, path: /echo, upstream: "http://127.0.0.1:1/echo", realm: missing }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let gateway = try DemoRun(["gateway", "--config", path, "--port", "0"])
        defer { gateway.stop() }
        try await gateway.expect("gateway.yaml: service echo: no realm missing")
        #expect(try await gateway.exitStatus() != 0)
    }

    @Test func aPortInUseIsSaidInWordsWithoutTheUsage() async throws {
        let taken = try DemoRun(["gateway", "--port", "0", "--log-level", "warning"])
        defer { taken.stop() }
        let banner = try await taken.expect("Stop with Ctrl-C.")
        let line = try #require(banner.split(separator: "\n").first { $0.hasPrefix("Gatehouse gateway listens on http://") })
        let port = try #require(line.split(separator: ":").last.map(String.init))
        for command in [["gateway", "--port", port], ["serve", "--port", port, "--data", TestServer.temporaryDirectory()]] {
            let second = try DemoRun(command + ["--log-level", "warning"])
            defer { second.stop() }
            _ = try await second.expect("Cannot serve on 127.0.0.1:\(port): address already in use")
            #expect(try await second.exitStatus() == 1, "\(command)")
            #expect(!second.text.contains("Usage:") && !second.text.contains("errno"), "\(second.text)")
        }
    }

    @Test func anOptionOutOfItsRangeIsRefusedWithTheUsage() async throws {
        for command in ["serve", "gateway"] {
            let run = try DemoRun([command, "--log-level", "verbose", "--port", "0"])
            defer { run.stop() }
            _ = try await run.expect("The value 'verbose' is invalid for '--log-level")
            #expect(try await run.exitStatus() == 64, "\(command)")
        }
        let version = try DemoRun(["--version"])
        defer { version.stop() }
        _ = try await version.expect("gatehouse 1.0.0 (MobileFirst 8.0 runtime protocol)")
        #expect(try await version.exitStatus() == 0)
        let hashing = try DemoRun(["hash-password", "--cost", "16"])
        defer { hashing.stop() }
        _ = try await hashing.expect("--cost must be between 4 and 15")
        #expect(try await hashing.exitStatus() == 64)
    }
}
