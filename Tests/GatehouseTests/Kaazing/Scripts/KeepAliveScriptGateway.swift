import GatehouseEcho
import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// The real gateways KAAZING's keep-alive scripts play against (`x-kaazing-idle-timeout`, `x-kaazing-ping-pong`, the
/// inactivity timeout), one echo upstream behind both, started on first use and kept for the test process. As in
/// KAAZING Gateway's own tests, the scripts' paths are the services' and their inactivity timeout is the
/// gateway's configuration:
/// - ``timed``: `/echo` and `/proxy` with a 1 s inactivity timeout (KAAZING's `WsnInactivityTimeoutIT`,
///   `IdleTimeoutExtensionIT`, `IdleTimeoutExtensionPongsIT`: `ws.inactivity.timeout` 2 s — halved here so that the
///   scripts that wait for a close take a second and a half; `/proxy`'s upstream reads and never writes), `/path` with
///   10 s (`WsebIdleTimeoutExtensionIT`), `/echoNoTimeout` without one;
/// - ``untimed``: `/echo` without an inactivity timeout (`PingPongExtensionIT`).
final class KeepAliveScriptGateway: Sendable {
    static let timed = KeepAliveScriptGateway(timeout: 1)
    static let untimed = KeepAliveScriptGateway(timeout: nil)

    private let running: Task<Int, any Error>

    private init(timeout: Double?) {
        running = Task {
            let logger = GatewayFixture.logger
            let echo = try await RunningApp.start(logger: logger) { onRunning in EchoService.makeApplication(logger: logger, onServerRunning: onRunning) }
            let upstream = "http://127.0.0.1:\(echo.port)"
            var configuration = GatewayConfiguration(
                realms: [],
                services: [
                    ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", webSocket: true, inactivityTimeout: timeout),
                    ServiceConfiguration(name: "proxy", path: "/proxy", upstream: upstream + "/sink", webSocket: true, inactivityTimeout: timeout),
                    ServiceConfiguration(name: "path", path: "/path", upstream: upstream + "/path", webSocket: true,
                                         inactivityTimeout: timeout.map { _ in 10 }),
                    ServiceConfiguration(name: "echoNoTimeout", path: "/echoNoTimeout", upstream: upstream + "/echo", webSocket: true),
                ])
            configuration.port = 0
            let gateway = try Gateway(configuration: configuration, logger: logger)
            let app = try await RunningApp.start(logger: logger) { onRunning in try gateway.makeServer(onServerRunning: onRunning) }
            _ = echo
            return app.port
        }
    }

    /// The gateway's port (it starts on first use).
    var port: Int { get async throws { try await running.value } }
}

/// What KAAZING's keep-alive scripts read and write on a raw socket.
enum KeepAliveScript {
    /// The control bytes the gateway announces (`x-kaazing-ping-pong; 01010102`).
    static let control: [UInt8] = [0x01, 0x01, 0x01, 0x02]
    /// `read [0x81 0x06 0x01 0x01 0x01 0x02 0x09 0x00]`: an extended ping.
    static let extendedPing: [UInt8] = [0x81, 0x06] + control + [0x09, 0x00]
    /// `read [0x81 0x06 0x01 0x01 0x01 0x02 0x0a 0x00]`: an extended pong.
    static let extendedPong: [UInt8] = [0x81, 0x06] + control + [0x0A, 0x00]
    /// `write [0x81 0x86 0x01 0x01 0x01 0x01 0x00 0x00 0x00 0x03 0x0b 0x01]`: the client's extended pong, masked with
    /// `01 01 01 01`, as the `transport/wsn` scripts write it.
    static let maskedExtendedPong: [UInt8] = [0x81, 0x86, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x03, 0x0B, 0x01]

    /// `write [<b0> <0x80|length>] ${writeMask}` + the payload masked with it (`write option mask ${writeMask}`).
    static func masked(_ first: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        return [first, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// The `transport/wsn` scripts' upgrade: `GET <target> HTTP/1.1`, their fields in order, `Sec-WebSocket-Extensions`
    /// when given.
    static func wsnUpgrade(_ target: String, extensions: String?) -> String {
        "GET \(target) HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nHost: localhost:8001\r\nOrigin: http://localhost:8001\r\n"
            + "Sec-WebSocket-Key: nDaimG37f4nUqogPypithw==\r\nSec-WebSocket-Version: 13\r\n"
            + (extensions.map { "Sec-WebSocket-Extensions: \($0)\r\n" } ?? "") + "\r\n"
    }

    /// The k3po `ws.extensions` scripts' upgrade (`connect "http://localhost:8001/echo"`, `write http:host`, the
    /// `Upgrade`, `Connection`, `Sec-WebSocket-Key` (a fresh `ws:handshakeKey()`), `-Version` and `-Extensions` fields):
    /// the request and its key.
    static func k3poUpgrade(port: Int, _ path: String = "/echo", extensions: String) -> (request: String, key: String) {
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        return ("GET \(path) HTTP/1.1\r\nHost: localhost:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\n"
                + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: \(extensions)\r\n\r\n", key)
    }

    /// Reads a `101` and checks it switched with `key`; its `Sec-WebSocket-Extensions` values, in order.
    static func switched(_ connection: RawHTTPConnection, key: String) async throws -> [String] {
        guard let answer = await connection.readResponse(toHEAD: true) else { throw TestFailure("no answer to the upgrade") }
        #expect(answer.status == 101)
        #expect(answer.header("Upgrade")?.lowercased() == "websocket")
        #expect(answer.header("Connection")?.lowercased() == "upgrade")
        #expect(answer.header("Sec-WebSocket-Accept") == WebSocketAccept.value(forKey: key))
        return answer.headers.filter { $0.name.caseInsensitiveCompare("Sec-WebSocket-Extensions") == .orderedSame }.map(\.value)
    }

    /// Reads exactly `count` bytes (the connection's own timeout bounds it).
    static func read(_ connection: RawHTTPConnection, _ count: Int) async throws -> [UInt8] {
        guard let bytes = await connection.readBytes(count: count) else { throw TestFailure("the connection ended before \(count) bytes") }
        return bytes
    }

    /// The script's close: `write [0x88 0x80] ${writeMask}`, then `read [0x88 0x00]` — the upstream's answer relayed,
    /// its code echoed (Gatehouse relays the close handshake end to end; the echo upstream answers `1000`); then
    /// `closed`.
    static func close(_ connection: RawHTTPConnection) async throws {
        await connection.send(masked(0x88, []))
        let head = try await read(connection, 2)
        #expect(head[0] == 0x88)
        if head[1] > 0 { _ = try await read(connection, Int(head[1])) }
        #expect(await connection.readToEnd().closed)
    }

    /// Seconds since `start`.
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
