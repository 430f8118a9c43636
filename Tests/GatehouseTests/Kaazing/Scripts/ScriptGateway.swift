import GatehouseEcho
import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Logging
import Synchronization
import Testing

/// One real gateway (and its echo upstream) shared by every test of a suite that plays KAAZING's robot scripts
/// (k3po `specification/wse`, `specification/httpx`): started on first use, kept for the test process (a gateway per
/// test would cost more than the scripts). Its services:
/// - `/path`: a WebSocket echo without a realm, as the scripts' `http://localhost:8080/path` (any origin);
/// - `/guarded`: the same, admitting pages of ``page`` only (`allowedOrigins`);
/// - `/echo`: the same, admitting pages of `http://localhost:8001` only, as KAAZING Gateway's `transport/wsn` tests;
/// - `/basic`: a WebSocket echo behind a `Basic` realm (joe/welcome has the role);
/// - `/token`: a WebSocket echo behind an `Application Token` realm;
/// - `/auth`: a WebSocket echo behind an `Application Basic` realm described "Kaazing WebSocket Gateway Demo", as the
///   httpx scripts' `http://localhost:8080/auth` (joe/welcome), with a 60 s inactivity timeout (its
///   `x-kaazing-idle-timeout` announced to a client that asks);
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
                realms: [GatewayFixture.usersRealm("demo", scheme: .basic, description: "Demo Realm"), token,
                         GatewayFixture.usersRealm("kaazing", scheme: .applicationBasic, description: "Kaazing WebSocket Gateway Demo")],
                services: [
                    ServiceConfiguration(name: "path", path: "/path", upstream: upstream + "/path", webSocket: true),
                    ServiceConfiguration(name: "guarded", path: "/guarded", upstream: upstream + "/guarded", webSocket: true, allowedOrigins: [ScriptGateway.page]),
                    ServiceConfiguration(name: "basic", path: "/basic", upstream: upstream + "/basic", realm: "demo", requireRoles: ["AUTHORIZED"],
                                         webSocket: true),
                    ServiceConfiguration(name: "token", path: "/token", upstream: upstream + "/token", realm: "tokens", webSocket: true),
                    ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", webSocket: true,
                                         allowedOrigins: ["http://localhost:8001"]),
                    ServiceConfiguration(name: "auth", path: "/auth", upstream: upstream + "/auth", realm: "kaazing", webSocket: true,
                                         inactivityTimeout: 60),
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

    /// `source`: another loopback address to connect from (each suite its own: the gateway bounds the emulated
    /// WebSockets one address holds before their downstreams come, and the opening scripts leave theirs so).
    init(port: Int, from source: String? = nil) throws {
        self.port = port
        connection = try RawHTTPConnection(port: port, from: source, timeout: .seconds(20))
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

    /// Writes a request exactly: its request line, `Host`, then `fields` in their order, the blank line and `body`
    /// (k3po's `write http:…` lines; `Content-Length` is one of `fields` where the script writes it). `halfClose`:
    /// the script's `write close` (the client's last byte; it reads on).
    func write(_ method: String, _ target: String, _ fields: [String], body: [UInt8] = [], halfClose: Bool = false) async {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n"
        for field in fields { head += field + "\r\n" }
        await connection.send(Array((head + "\r\n").utf8) + body)
        if halfClose { connection.shutdownWrite() }
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

/// KAAZING's emulated transport as k3po's `specification/wse` scripts play its client: `POST …/path/;e/cbm?query` (the
/// binary encoding, as KAAZING's Java client), the downstream `GET` and the upstream `POST`s with `X-Sequence-No`.
enum WSEScript {
    /// Where the scripts are, in k3po's repository.
    static let root = "specification/wse/src/main/scripts/org/kaazing/specification/wse/"

    private static let sources = Mutex(0)

    /// A loopback address no create has come from yet in this process (`127.1.x.y`): the gateway bounds the emulated
    /// WebSockets one address holds before their downstreams come (16), and tests running side by side would share one.
    static func freshSource() -> String {
        let n = sources.withLock { n in
            n += 1
            return n
        }
        return "127.1.\(n / 250).\(n % 250 + 1)"
    }

    /// `property sequence ${wse:randomInt(100)}`.
    static func randomSequence() -> Int { Int.random(in: 0..<100) }

    /// `${wse:randomBytes(n)}`.
    static func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    /// `${ws:randomBytesUTF8(n)}`: `n` bytes of well-formed UTF-8, characters of one to four bytes.
    static func randomUTF8(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        let samples = ["a", "Z", "é", "ß", "€", "中", "😀", "𝄞"].map { Array($0.utf8) }
        while bytes.count < count {
            let sample = samples.randomElement()!
            bytes += sample.count <= count - bytes.count ? sample : [UInt8.random(in: 0x20...0x7E)]
        }
        return bytes
    }

    /// The create as the scripts write it (`write close` after it): its answer, and whether the gateway then closed.
    static func create(port: Int, from source: String? = nil, target: String = "/path/;e/cbm?query", method: String = "POST",
                       fields: [String], body: [UInt8] = []) async throws -> (answer: RawHTTPResponse, closed: Bool) {
        let client = try ScriptClient(port: port, from: source ?? freshSource())
        await client.write(method, target, fields, body: body, halfClose: true)
        let answer = try await client.response()
        return (answer, await client.closed())
    }

    /// An open emulated WebSocket: its create's sequence number, its upstream URL's path, its downstream (head read).
    struct Opened {
        let sequence: Int
        let upstream: String
        let downstreamPath: String
        let downstream: ScriptClient
        /// The address its requests come from.
        let source: String?
    }

    /// The scripts' opening: the create (`Content-Length: 0`, `X-WebSocket-Version`, `X-Sequence-No`) on `encoding`
    /// (`cbm` the binary one, `ctm`/`ctem` the text and escaped text ones), then the downstream `GET` (`X-Sequence-No`
    /// + 1, `Content-Length: 0`, `write close`) answered `200` `application/octet-stream` (the text encodings:
    /// `text/plain;charset=windows-1252`), `Connection: close`.
    static func open(port: Int, from source: String? = nil, path: String = "/path", encoding: String = "cbm") async throws -> Opened {
        let sequence = randomSequence()
        let (created, closed) = try await create(port: port, from: source, target: path + "/;e/\(encoding)?query",
                                                 fields: ["Content-Length: 0", "X-WebSocket-Version: wseb-1.0", "X-Sequence-No: \(sequence)"])
        #expect(created.status == 201)
        #expect(created.header("Content-Type")?.lowercased() == "text/plain;charset=utf-8")
        #expect(closed)
        let (upstream, downstreamPath) = try createdLocations(created, port: port)
        let downstream = try ScriptClient(port: port, from: source)
        await downstream.write("GET", downstreamPath, ["X-Sequence-No: \(sequence + 1)", "Content-Length: 0"], halfClose: true)
        let head = try await downstream.head()
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == (encoding.hasPrefix("cb") ? "application/octet-stream" : "text/plain;charset=windows-1252"))
        #expect(head.header("Connection") == "close")
        return Opened(sequence: sequence, upstream: upstream, downstreamPath: downstreamPath, downstream: downstream, source: source)
    }

    /// The scripts' upstream `POST` (`Content-Type: application/octet-stream`, `X-Sequence-No`, `Content-Length`)
    /// carrying `body`; the connection, to read its answer on.
    static func upstream(port: Int, _ opened: Opened, sequence: Int? = nil, body: [UInt8], halfClose: Bool = false,
                         contentType: String = "application/octet-stream") async throws -> ScriptClient {
        let client = try ScriptClient(port: port, from: opened.source)
        await client.write("POST", opened.upstream, ["Content-Type: \(contentType)", "X-Sequence-No: \(sequence ?? opened.sequence + 1)",
                                                     "Content-Length: \(body.count)"], body: body, halfClose: halfClose)
        return client
    }
}
