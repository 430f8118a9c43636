import Foundation
@testable import GatehouseGateway
import HTTPTypes
import NIOCore
import Testing

/// The gateway's request policy alone, without a socket: what it answers itself, where it routes, which methods and
/// WebSocket handshakes it refuses. The same rules over a real connection: GatewayRequestTargetTests,
/// NonWebSocketUpgradeTests, GatewayForwardingTests.
@Suite(.timeLimit(.minutes(1)))
struct GatewayRequestPolicyTests {
    static let upstream = URL(string: "http://127.0.0.1:9")!

    static func policy() throws -> GatewayRequestPolicy {
        let gateway = Gateway(services: [
            try ProtectedService(name: "root", path: "/", upstream: upstream, realm: nil),
            try ProtectedService(name: "echo", path: "/echo", upstream: upstream, realm: nil, webSocket: true),
        ])
        return GatewayRequestPolicy(gateway: gateway)
    }

    /// A request head read as the gateway reads one.
    static func head(_ text: String) throws -> ClientRequestHead {
        let bytes = Array(text.utf8)
        let parsed = try bytes.withUnsafeBytes { raw throws(HTTPHeadError) in try HTTPMessageHead.parse(raw, kind: .request) }
        let head = try #require(parsed)
        return ClientRequestHead(bytes: ByteBuffer(bytes: bytes.prefix(head.length)), head: head)
    }

    static func handshake(_ method: String = "GET", path: String = "/echo/x", fields: [String]) throws -> ClientRequestHead {
        try head("\(method) \(path) HTTP/1.1\r\nHost: x\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n")
    }

    static let good = ["Upgrade: websocket", "Connection: keep-alive, Upgrade", "Sec-WebSocket-Version: 13",
                       "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]

    @Test func theGatewaysOwnEndpointsComeBeforeAServiceAtTheRoot() throws {
        let policy = try Self.policy()
        for (path, body) in [("/health", "ok"), ("/ready", "ready")] {
            guard case .answer(let answer) = policy.route(try RequestTarget(parsing: path), method: .get) else {
                Issue.record("\(path) went to a service")
                continue
            }
            #expect(answer.status.code == 200)
            #expect(answer.bodyText.contains(body))
        }
        guard case .answer(let metrics) = policy.route(try RequestTarget(parsing: "/metrics"), method: .get) else {
            Issue.record("/metrics went to a service")
            return
        }
        #expect(metrics.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
        guard case .answer(let bridge) = policy.route(try RequestTarget(parsing: "/?.kr=xs"), method: .get) else {
            Issue.record("KAAZING's bridge page went to a service")
            return
        }
        #expect(bridge.headers[.contentType]?.hasPrefix("text/html") == true)
        // Another method, or a longer path, is the service's.
        guard case .service(let service, _) = policy.route(try RequestTarget(parsing: "/health"), method: .other) else {
            Issue.record("POST /health was answered by the gateway")
            return
        }
        #expect(service.name == "root")
        guard case .service(let echo, let rest) = policy.route(try RequestTarget(parsing: "/echo/a/b"), method: .get) else {
            Issue.record("/echo/a/b was not routed")
            return
        }
        #expect(echo.name == "echo")
        #expect(rest.segments == ["a", "b"])
    }

    @Test func aTargetNoServiceHoldsIsNotFound() throws {
        let gateway = Gateway(services: [try ProtectedService(name: "api", path: "/api", upstream: Self.upstream, realm: nil)])
        guard case .answer(let answer) = GatewayRequestPolicy(gateway: gateway).route(try RequestTarget(parsing: "/apix"), method: .get) else {
            Issue.record("/apix was routed to /api")
            return
        }
        #expect(answer.status.code == 404)
        #expect(answer.bodyText.contains("not_found"))
    }

    @Test func tracingAndTunnelsAreRefusedWithAllow() {
        for method in ["TRACE", "TRACK", "CONNECT"] {
            let refusal = GatewayRequestPolicy.refusal(ofMethod: method)
            #expect(refusal?.status.code == 405)
            #expect(refusal?.headers[.allow] == "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS")
        }
        for method in ["GET", "POST", "PROPFIND", "trace"] {
            #expect(GatewayRequestPolicy.refusal(ofMethod: method) == nil, "\(method)")
        }
    }

    @Test func aWellFormedHandshakeToAWebSocketServiceIsOne() throws {
        let policy = try Self.policy()
        let head = try Self.handshake(fields: Self.good)
        let echo = policy.gateway.route(try RequestTarget(parsing: "/echo/x"))?.0
        #expect(GatewayRequestPolicy.webSocketUpgrade(head, to: echo) == .handshake(key: "dGhlIHNhbXBsZSBub25jZQ=="))
        // To a service without WebSockets, or none: a plain request.
        let root = policy.gateway.route(try RequestTarget(parsing: "/x"))?.0
        #expect(GatewayRequestPolicy.webSocketUpgrade(head, to: root) == .plain)
        #expect(GatewayRequestPolicy.webSocketUpgrade(head, to: nil) == .plain)
        // Without `Connection: upgrade` it asks for nothing (RFC 9110 §7.8).
        let noConnection = try Self.handshake(fields: Self.good.filter { !$0.hasPrefix("Connection") })
        #expect(GatewayRequestPolicy.webSocketUpgrade(noConnection, to: echo) == .plain)
    }

    @Test(arguments: [
        (["Sec-WebSocket-Version: 8"], 426),
        (["Sec-WebSocket-Version: 13, 8"], 426),
        ([String](), 426),
        (["Sec-WebSocket-Version: 13"], 400),  // no key
        (["Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: short"], 400),
        (["Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ"], 400),
        (["Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZ%=="], 400),
    ])
    func aMalformedHandshakeIsRefusedWhereverItGoes(fields: [String], status: Int) throws {
        let policy = try Self.policy()
        let head = try Self.handshake(fields: ["Upgrade: websocket", "Connection: Upgrade"] + fields)
        for path in ["/echo/x", "/x"] {
            let service = policy.gateway.route(try RequestTarget(parsing: path))?.0
            guard case .refused(let refused, let description) = GatewayRequestPolicy.webSocketUpgrade(head, to: service) else {
                Issue.record("\(fields) to \(path) was not refused")
                continue
            }
            #expect(refused == status)
            let answer = GatewayRequestPolicy.answer(refused, description)
            #expect(answer.status.code == status)
            #expect(answer.headers[HTTPField.Name("Sec-WebSocket-Version")!] == (status == 426 ? "13" : nil))
        }
    }

    @Test func aHandshakeIsAGetWithoutABody() throws {
        let echo = try Self.policy().gateway.route(try RequestTarget(parsing: "/echo"))?.0
        let post = try Self.handshake("POST", fields: Self.good)
        #expect(GatewayRequestPolicy.webSocketUpgrade(post, to: echo) == .refused(status: 400, description: "a WebSocket handshake is a GET request without a body"))
        let body = try Self.handshake(fields: Self.good + ["Content-Length: 5"])
        #expect(GatewayRequestPolicy.webSocketUpgrade(body, to: echo) == .refused(status: 400, description: "a WebSocket handshake is a GET request without a body"))
    }
}
