import Foundation
import HummingbirdBcrypt
import GatehouseProtocol
import GatehouseStore
import GatehouseSQLite
import Testing

/// `gatehouse serve` as a person runs it: the banner, a clean stop on SIGTERM, a clear policy error.
@Suite(.timeLimit(.minutes(3))) struct CommandTests {
    @Test func serveStartsTheDemoAndStopsCleanlyOnSIGTERM() async throws {
        let directory = TestServer.temporaryDirectory()
        let gatehouse = try GatehouseProcess.start(["serve", "--port", "0", "--data", directory])
        let line = try await gatehouse.waitForLine(containing: "listens on")
        let base = try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }).description
        #expect(try await HTTP.send(.GET, base + "/health").status == 200)
        // A registration from an application the demo policy does not know gets a clear error.
        let jws = try JWS.sign(
            RegistrationData(device: .init(id: "d"), application: .init(id: "com.unknown", clientPlatform: "ios", version: "1")),
            with: try ClientKeyPair(), kid: nil)
        let refused = try await HTTP.postJSON(base + "/mfp/api/registration/v1/self", RegistrationRequest(signedRegistrationData: jws))
        #expect(refused.status == 403)
        #expect(refused.json?["errorCode"] == "APPLICATION_NOT_REGISTERED")
        kill(gatehouse.process.processIdentifier, SIGTERM)
        #expect(try await gatehouse.waitForExit(seconds: 20) == 0)
        #expect(FileManager.default.fileExists(atPath: directory + "/gatehouse.sqlite"))
    }

    /// `--event-loops` sizes NIO's shared event loop group (the threads named `NIO-SGLTN-…`), for `serve` and `gateway`
    /// alike, and the process still serves on them; 0 is refused at start.
    @Test func eventLoopsSetsTheNumberOfEventLoopThreads() async throws {
        for (arguments, marker) in [(["serve", "--port", "0", "--data", TestServer.temporaryDirectory()], "listens on"),
                                    (["gateway", "--port", "0", "--log-level", "warning"], "gateway listens on")] {
            let gatehouse = try GatehouseProcess.start(arguments + ["--event-loops", "1"])
            let line = try await gatehouse.waitForLine(containing: marker)
            let base = try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }).description
            #expect(try await HTTP.send(.GET, base + "/health").status == 200)
            let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(gatehouse.process.processIdentifier)/task")
            let loops = tasks.filter {
                ((try? String(contentsOfFile: "/proc/\(gatehouse.process.processIdentifier)/task/\($0)/comm", encoding: .utf8)) ?? "").hasPrefix("NIO-SGLTN-")
            }
            #expect(loops.count == 1, "\(arguments[0]): \(loops.count) event loop threads")
            gatehouse.stop()
        }
        let refused = try GatehouseProcess.start(["gateway", "--port", "0", "--event-loops", "0"])
        #expect(try await refused.waitForExit() != 0)
        let message = String(decoding: refused.errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("--event-loops must be from 1 to 256"), "\(message)")
    }

    @Test func aWrongPolicyStopsStartUpNamingTheFileAndKey() async throws {
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let policy = directory + "/policy.yaml"
        try "applications:\n  - { id: a, platform: ios, scopeElementMapping: { x: Missing } }\n".write(toFile: policy, atomically: true, encoding: .utf8)
        let gatehouse = try GatehouseProcess.start(["serve", "--port", "0", "--data", directory, "--policy", policy])
        #expect(try await gatehouse.waitForExit() != 0)
        let message = String(decoding: gatehouse.errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("\(policy): applications[0].scopeElementMapping.x"), "\(message)")
        #expect(!message.contains("Fatal error"))
    }

    /// `--trusted-proxy` (and `GATEHOUSE_TRUSTED_PROXY`, comma-separated) is checked at start: a wrong entry stops
    /// the server naming the option, rather than a proxy silently not trusted.
    @Test func aWrongTrustedProxyStopsStartUpNamingTheOption() async throws {
        let directory = TestServer.temporaryDirectory()
        let gatehouse = try GatehouseProcess.start(["serve", "--port", "0", "--data", directory, "--trusted-proxy", "10.0.0.0/8,not-an-address"])
        #expect(try await gatehouse.waitForExit() != 0)
        let message = String(decoding: gatehouse.errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("--trusted-proxy: not-an-address is not an IP address or CIDR block"), "\(message)")
    }

    /// `serve --otlp-endpoint` sends its traces there, under `service.name` gatehouse; a sample ratio beyond 0…1 stops
    /// the start naming the option.
    @Test func serveSendsItsTracesToTheCollectorItIsGiven() async throws {
        let collector = try await TraceCollector.start()
        let refused = try GatehouseProcess.start(["serve", "--port", "0", "--data", TestServer.temporaryDirectory(),
                                                  "--otlp-endpoint", collector.endpoint, "--trace-sample-ratio", "2"])
        #expect(try await refused.waitForExit() != 0)
        let message = String(decoding: refused.errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("--trace-sample-ratio must be between 0 and 1"), "\(message)")
        let gatehouse = try GatehouseProcess.start(["serve", "--port", "0", "--data", TestServer.temporaryDirectory(),
                                                    "--otlp-endpoint", collector.endpoint])
        let banner = try await gatehouse.waitForLine(containing: "Gatehouse listens on")
        let port = try #require(banner.split(separator: ":").dropFirst(2).first.flatMap { Int($0.prefix { $0.isNumber }) })
        #expect(try await HTTP.send(.GET, "http://127.0.0.1:\(port)/health").status == 200)
        let spans = try await collector.spans { $0.contains { $0.name == "GET /health" } }
        #expect(spans.contains { $0.name == "GET /health" })
        #expect(collector.resources.first?.attributes.contains(.init("service.name", .string("gatehouse"))) == true)
        kill(gatehouse.process.processIdentifier, SIGTERM)
        #expect(try await gatehouse.waitForExit(seconds: 20) == 0)
        await collector.stop()
    }

    /// The suite's children (curl, openssl, ab, gatehouse) inherit no descriptor of the test process but their
    /// standard ones: one holding a dup of another test's socket or pipe kept it open and hung that test.
    @Test func spawnedChildrenInheritOnlyTheirStandardDescriptors() async throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let listed = try await runOffThePool("/bin/ls", ["/proc/self/fd"])
        let descriptors = listed.output.split(separator: "\n").compactMap { Int($0) }
        // ls's own directory stream is the one more.
        #expect(descriptors.allSatisfy { $0 <= 3 } && descriptors.count <= 4, "\(descriptors); the test's pipe is \(ends)")
    }

    /// A confidential client's secret made by the command: 256 random bits (43 base64url characters), then its hash.
    @Test func hashPasswordMakesANewClientSecretAndItsHash() async throws {
        let gatehouse = try GatehouseProcess.start(["hash-password", "--new-client-secret", "--cost", "4"])
        #expect(try await gatehouse.waitForExit() == 0)
        let lines = String(decoding: gatehouse.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        let secret = lines.first ?? "", hash = lines.last ?? ""
        #expect(secret.count == 43 && secret.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }, "\(secret)")
        #expect(Bcrypt.verify(secret, hash: hash))
    }

    @Test func theBannerNamesAnAppliedPolicyInsteadOfTheDemos() async throws {
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A policy applied through the admin API, kept in the store: it runs at the next start, not the demo's.
        let store = try SQLiteStore.open(dataDirectory: directory)
        try await store.insertPolicy(StoredPolicy(
            version: 3, yaml: "securityChecks: { Pin: { class: PinCodeAttempts } }\napplications: [{ id: a, platform: ios }]\n",
            appliedAt: 1, actor: "ops"))
        let gatehouse = try GatehouseProcess.start(["serve", "--port", "0", "--data", directory])
        _ = try await gatehouse.waitForLine(containing: "Policy: stored policy version 3.")
        kill(gatehouse.process.processIdentifier, SIGTERM)
        #expect(try await gatehouse.waitForExit(seconds: 20) == 0)
    }
}
