import GatehouseEcho
import Foundation
import GatehouseGateway
@testable import GatehouseKaazing
import Testing

/// Seed 004's login handler and demo (Seed004LoginHandler.swift, only the import changed) against a real
/// `gatehouse gateway` process, on a Basic realm and an Application Basic realm: the right password opens and echoes,
/// a wrong one is asked again until the login handler's retry counter returns `nil`, then the close.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: DemoRun.isBuilt, "needs the built gatehouse executable (swift build)"))
struct KaazingSeedTests {
    /// A `gatehouse gateway --config` with `/basic` (Basic) and `/app` (Application Basic) in front of an echo.
    static func withGateway(_ body: (_ wsBase: String) async throws -> Void) async throws {
        let logger = GatewayFixture.logger
        let echo = try await RunningApp.start(logger: logger) { onRunning in EchoService.makeApplication(logger: logger, onServerRunning: onRunning) }
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let upstream = "http://127.0.0.1:\(echo.port)/echo"
        let configuration = GatewayConfiguration(
            realms: [GatewayFixture.usersRealm("basic", scheme: .basic, description: "Basic Realm"),
                     GatewayFixture.usersRealm("app", scheme: .applicationBasic, description: "Demo Realm")],
            services: [ServiceConfiguration(name: "basic", path: "/basic", upstream: upstream, realm: "basic", requireRoles: ["AUTHORIZED"], webSocket: true),
                       ServiceConfiguration(name: "app", path: "/app", upstream: upstream, realm: "app", requireRoles: ["AUTHORIZED"], webSocket: true)])
        // JSON is YAML: the configuration as the gateway reads it from a file.
        try JSONEncoder().encode(configuration).write(to: URL(fileURLWithPath: directory + "/gateway.yaml"))
        let gateway = try DemoRun(["gateway", "--config", directory + "/gateway.yaml", "--port", "0", "--log-level", "warning"])
        defer {
            gateway.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        do {
            let banner = try await gateway.expect("(realm app), WebSocket")
            let line = try #require(banner.split(separator: "\n").first { $0.hasPrefix("Gatehouse gateway listens on http://") })
            let base = String(line.dropFirst("Gatehouse gateway listens on ".count))
            try await body(base.replacingOccurrences(of: "http://", with: "ws://"))
        } catch {
            await echo.stop()
            throw error
        }
        await echo.stop()
    }

    /// Waits (at most 15 s) until the demo's text view shows a line starting with `prefix`.
    static func waitFor(_ prefix: String, in controller: KGViewController) async throws -> String {
        for _ in 0..<300 {
            if let line = controller.textView.text.first(where: { $0.hasPrefix(prefix) }) { return line }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("no \(prefix) in \(controller.textView.text)")
    }

    static func person(_ username: String, _ password: String) {
        _ = UIAlertView.mainQueueKey
        UIAlertView.lock.withLock {
            UIAlertView.user = { (1, username, password) }
            UIAlertView.shown = []
        }
    }

    static var popups: [Bool] { UIAlertView.lock.withLock { UIAlertView.shown } }

    @Test func theRightPasswordOpensAndEchoesOnBothRealms() async throws {
        try await Self.withGateway { wsBase in
            for path in ["/basic", "/app"] {
                Self.person("joe", "welcome")
                let controller = KGViewController()
                controller.connect(wsBase + path)
                _ = try await Self.waitFor("CONNECTED", in: controller)
                #expect(Self.popups == [true], "one pop-up, on the main queue")
                #expect(controller._websocket?.readyState() == KGReadyState_OPEN)
                controller.send("hello from the seed")
                #expect(try await Self.waitFor("RECEIVED MESSAGE", in: controller) == "RECEIVED MESSAGE: hello from the seed")
                controller.close()
                #expect(try await Self.waitFor("CLOSED", in: controller) == "CLOSED(1000): Reason: ")
                #expect(controller._websocket?.readyState() == KGReadyState_CLOSED)
                #expect(controller._loginHandler?.retry() == 0)
            }
        }
    }

    @Test func aWrongPasswordIsAskedAgainUntilTheHandlerReturnsNilThenTheClose() async throws {
        try await Self.withGateway { wsBase in
            for path in ["/basic", "/app"] {
                Self.person("joe", "not-welcome")
                let controller = KGViewController()
                controller.connect(wsBase + path)
                let closed = try await Self.waitFor("CLOSED", in: controller)
                #expect(closed.hasPrefix("CLOSED(1006)") && closed.hasSuffix("(not clean)"), "\(closed)")
                #expect(!controller.textView.text.contains("CONNECTED"))
                #expect(controller.textView.text.contains { $0.hasPrefix("ERROR:") })
                #expect(Self.popups == [true, true], "asked twice, then the counter gave up")
                #expect(controller._loginHandler?.retry() == 0)  // reset by didClose
            }
        }
    }

    /// A proxy that passes no WebSocket (nginx's `proxy_pass` without the `Upgrade` lines, as many are): the seed's
    /// upgrade is answered `401` without switching protocols, and the socket goes over KAAZING's emulated transport
    /// through the same proxy — asked once, opened, echoed, closed — as KAAZING's clients fall back.
    @Test func theSeedGetsThroughAProxyThatPassesNoWebSocketOnTheEmulatedTransport() async throws {
        try await Self.withGateway { wsBase in
            let gatewayPort = try #require(Int(wsBase.split(separator: ":").last ?? ""))
            try await Nginx.run(serverBody: """
                    location / {
                        proxy_pass http://127.0.0.1:\(gatewayPort);
                        proxy_http_version 1.1;
                    }
                """) { nginx in
                for path in ["/basic", "/app"] {
                    Self.person("joe", "welcome")
                    let controller = KGViewController()
                    controller.connect("ws://127.0.0.1:\(nginx.port)" + path)
                    _ = try await Self.waitFor("CONNECTED", in: controller)
                    #expect(Self.popups == [true], "one pop-up, on the main queue")
                    controller.send("hello through a proxy")
                    #expect(try await Self.waitFor("RECEIVED MESSAGE", in: controller) == "RECEIVED MESSAGE: hello through a proxy")
                    controller.close()
                    #expect(try await Self.waitFor("CLOSED", in: controller) == "CLOSED(1000): Reason: ")
                }
                let log = try String(contentsOfFile: nginx.folder + "/access.log", encoding: .utf8)
                #expect(log.contains("POST /basic/;e/cb?.kn=") && log.contains("GET /app/;e/db/"), "the emulated transport went through nginx")
            }
        }
    }

    @Test func theLoginHandlerBlocksOnItsOwnThread() async throws {
        try await Self.withGateway { wsBase in
            let seen = ThreadSeen()
            let handler = RecordingLoginHandler(seen)
            let factory = KGWebSocketFactory.createWebSocketFactory()
            let basic = KGBasicChallengeHandler.create()
            basic.setRealmLoginHandler("Basic Realm", loginHandler: handler)
            factory.setDefaultChallengeHandler(basic)
            factory.setDefaultConnectTimeout(5000)
            let socket = factory.createWebSocket(URL(string: wsBase + "/basic")!, protocols: [])
            // The login handler runs on the socket's challenge queue: never the main thread, never the pool.
            socket.challenges.setSpecific(key: Box.key, value: Box())
            #expect(socket.connectTimeout() == 5000)
            let opened = Box()
            socket.didOpen = { _ in opened.set() }
            socket.connect()
            for _ in 0..<300 where !opened.isSet { try await Task.sleep(for: .milliseconds(50)) }
            #expect(opened.isSet)
            #expect(seen.values == [.challengeQueue])
            socket.close(4000, reason: "done")
        }
    }
}

/// A flag and a dispatch-specific key.
final class Box: @unchecked Sendable {
    static let key = DispatchSpecificKey<Box>()
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// Where a login handler was called.
final class ThreadSeen: @unchecked Sendable {
    enum Place: Equatable { case main, challengeQueue, other }
    private let lock = NSLock()
    private var places: [Place] = []
    func record(_ place: Place) { lock.withLock { places.append(place) } }
    var values: [Place] { lock.withLock { places } }
}

/// Answers joe/welcome and records the thread it was asked on.
final class RecordingLoginHandler: KGLoginHandler, @unchecked Sendable {
    let seen: ThreadSeen
    init(_ seen: ThreadSeen) { self.seen = seen }
    override func credentials() -> URLCredential? {
        if Thread.isMainThread { seen.record(.main) }
        else if DispatchQueue.getSpecific(key: Box.key) != nil { seen.record(.challengeQueue) }
        else { seen.record(.other) }
        return URLCredential(user: "joe", password: "welcome", persistence: .none)
    }
}
