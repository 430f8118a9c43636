import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Logging
import Testing

/// One real gateway (and its echo upstream) shared by every test of a suite that plays KAAZING's robot scripts
/// (k3po `specification/wse`, `specification/httpx`): started on first use, kept for the test process (a gateway per
/// test would cost more than the scripts). Its services:
/// - `/path`: a WebSocket echo without a realm, as the scripts' `http://localhost:8080/path` (any origin);
/// - `/guarded`: the same, admitting pages of ``page`` only (`allowedOrigins`);
/// - `/basic`: a WebSocket echo behind a `Basic` realm (joe/welcome has the role);
/// - `/token`: a WebSocket echo behind an `Application Token` realm;
/// - `/http`, `/httpbasic`: the echo's plain HTTP, without a realm and behind the `Basic` realm.
final class ScriptGateway: Sendable {
    static let page = "http://app.example:8080"
    static let shared = ScriptGateway()

    private let running: Task<(port: Int, gateway: Gateway), any Error>

    private init() {
        running = Task {
            let logger = GatewayFixture.logger
            let echo = try await RunningApp.start(logger: logger) { onRunning in EchoService.makeApplication(logger: logger, onServerRunning: onRunning) }
            let upstream = "http://127.0.0.1:\(echo.port)"
            let token = RealmConfiguration(name: "tokens", description: "Tokens", scheme: .applicationToken, queryParameters: ["access_token"],
                                           loginModules: [LoginModuleConfiguration(type: "gatehouse-token", flag: .required,
                                                                                   jwksURL: upstream + "/not-a-jwks")])
            var configuration = GatewayConfiguration(
                realms: [GatewayFixture.usersRealm("demo", scheme: .basic, description: "Demo Realm"), token],
                services: [
                    ServiceConfiguration(name: "path", path: "/path", upstream: upstream + "/path", webSocket: true),
                    ServiceConfiguration(name: "guarded", path: "/guarded", upstream: upstream + "/guarded", webSocket: true, allowedOrigins: [ScriptGateway.page]),
                    ServiceConfiguration(name: "basic", path: "/basic", upstream: upstream + "/basic", realm: "demo", requireRoles: ["AUTHORIZED"],
                                         webSocket: true),
                    ServiceConfiguration(name: "token", path: "/token", upstream: upstream + "/token", realm: "tokens", webSocket: true),
                    ServiceConfiguration(name: "http", path: "/http", upstream: upstream + "/http"),
                    ServiceConfiguration(name: "httpbasic", path: "/httpbasic", upstream: upstream + "/httpbasic", realm: "demo",
                                         requireRoles: ["AUTHORIZED"]),
                ])
            configuration.port = 0
            let gateway = try Gateway(configuration: configuration, logger: logger)
            let app = try await RunningApp.start(logger: logger) { onRunning in try gateway.makeServer(onServerRunning: onRunning) }
            _ = echo
            return (app.port, gateway)
        }
    }

    /// The gateway's port (it starts on first use).
    var port: Int { get async throws { try await running.value.port } }
    var gateway: Gateway { get async throws { try await running.value.gateway } }
}

/// A client's side of a script on a raw socket: requests written byte for byte, answers read as they come.
struct ScriptClient {
    let port: Int
    let connection: RawHTTPConnection

    init(port: Int) throws {
        self.port = port
        connection = try RawHTTPConnection(port: port, timeout: .seconds(20))
    }

    /// `write http:host`: the request's `Host` as k3po writes it.
    var host: String { "127.0.0.1:\(port)" }

    /// Writes a request: its request line, the fields given (after `Host`), and `body` with its `Content-Length`
    /// unless `length` is `false` (`write http:content-length`).
    func send(_ method: String, _ target: String, _ fields: [String] = [], body: [UInt8] = [], length: Bool = true) async {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n"
        for field in fields { head += field + "\r\n" }
        if length { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        await connection.send(Array(head.utf8) + body)
    }

    /// Reads one whole answer (head and `Content-Length` body).
    func response() async throws -> RawHTTPResponse {
        guard let response = await connection.readResponse() else { throw TestFailure("no answer") }
        return response
    }

    /// Reads an answer's head only (a downstream's body streams).
    func head() async throws -> RawHTTPResponse {
        guard let response = await connection.readResponse(toHEAD: true) else { throw TestFailure("no answer's head") }
        return response
    }

    /// Reads exactly `bytes` (`read [0x80 0x7f] ${client127}`).
    func read(_ count: Int) async throws -> [UInt8] {
        guard let bytes = await connection.readBytes(count: count) else { throw TestFailure("the stream ended before \(count) bytes") }
        return bytes
    }

    /// Reads the next frame's bytes from a binary (`cbm`/`cb`) downstream, `NOP` heartbeats skipped.
    func frame() async throws -> KaazingEmulation.Frame {
        while true {
            let type = try await read(1)[0]
            var bytes = [type]
            if type & 0x80 == 0 {
                repeat { bytes += try await read(1) } while bytes.last != 0xFF
            } else {
                var length = 0
                while true {
                    let byte = try await read(1)[0]
                    bytes.append(byte)
                    length = length << 7 | Int(byte & 0x7F)
                    if byte & 0x80 == 0 { break }
                }
                if length > 0 { bytes += try await read(length) }
            }
            if bytes == KaazingEmulation.encode(.command(.nop)) { continue }
            let frames = try KaazingEmulation.frames(in: bytes, maximumLength: 1 << 21)
            guard frames.count == 1 else { throw TestFailure("not one frame: \(bytes.prefix(16))") }
            return frames[0]
        }
    }

    /// Reads to the end of the connection: `true` when the server closed it.
    func closed() async -> Bool { await connection.readToEnd().closed }
}

/// The two URLs of a create's `201` as paths of this gateway (they must be its own, `http://127.0.0.1:<port>`).
func createdLocations(_ created: RawHTTPResponse, port: Int) throws -> (upstream: String, downstream: String) {
    let lines = created.text.split(separator: "\n").map(String.init)
    let prefix = "http://127.0.0.1:\(port)"
    guard created.status == 201, lines.count == 2, lines.allSatisfy({ $0.hasPrefix(prefix) }) else {
        throw TestFailure("not a create's answer: \(created.status) \(created.text)")
    }
    return (String(lines[0].dropFirst(prefix.count)), String(lines[1].dropFirst(prefix.count)))
}
