import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// Issue 53: what KAAZING's other clients (the Java client, older browsers' JavaScript client) send, against the real
/// gateway on a raw socket — native clients' `privileged://` origin and same-origin pages under `allowedOrigins`,
/// creates without sequence numbers, the binary encoding (`cb`, `cbm`), `X-Accept-Commands`, a downstream URL without
/// its session, and a plain upgrade to an `Application Token` realm.
@Suite(.timeLimit(.minutes(3))) struct KaazingCompatibilityTests {
    /// A plain RFC 6455 upgrade (`protocols`: `x-kaazing-handshake` for KAAZING's extended handshake).
    static func upgrade(port: Int, path: String, origin: String?, protocols: String? = nil, host: String? = nil) async throws -> (status: Int, connection: RawHTTPConnection) {
        let connection = try RawHTTPConnection(port: port, timeout: .seconds(20))
        await connection.send("GET \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              + (origin.map { "Origin: \($0)\r\n" } ?? "") + (protocols.map { "Sec-WebSocket-Protocol: \($0)\r\n" } ?? "")
                              + "Sec-WebSocket-Key: \(KaazingWire.key)\r\nSec-WebSocket-Version: 13\r\n\r\n")
        guard let answer = await connection.readResponse(toHEAD: true) else { throw TestFailure("no answer to the upgrade") }
        return (answer.status, connection)
    }

    /// A create as KAAZING's Java client sends it (`POST …/;e/cbm`, no body).
    static func create(port: Int, path: String = "/path/;e/cbm?query", fields: [String]) async throws -> RawHTTPResponse {
        let client = try ScriptClient(port: port)
        await client.send("POST", path, fields + ["Connection: close"])
        return try await client.response()
    }

    // MARK: Origins

    @Test func nativeClientsPrivilegedOriginIsAdmittedUnderAllowedOrigins() async throws {
        let port = try await ScriptGateway.shared.port
        // KAAZING's Java client: `privileged://host:port` — on a plain upgrade, the extended handshake and a create.
        #expect(try await Self.upgrade(port: port, path: "/guarded", origin: "privileged://127.0.0.1:\(port)").status == 101)
        #expect(try await Self.upgrade(port: port, path: "/guarded", origin: "PRIVILEGED://gateway.example", protocols: KaazingHandshake.protocolName).status == 101)
        let created = try await Self.create(port: port, path: "/guarded/;e/cbm", fields: ["X-WebSocket-Version: wseb-1.0", "X-Sequence-No: 1",
                                                                                           "Origin: privileged://127.0.0.1:\(port)"])
        #expect(created.status == 201)
        // Pages of other origins are still refused, and so is anything that only looks privileged.
        for origin in ["http://evil.example", "privileged://", "privileged://a b", "privileged://evil/path", "null"] {
            #expect(try await Self.upgrade(port: port, path: "/guarded", origin: origin).status == 403, "\(origin)")
        }
        #expect(ProtectedService.isPrivileged("privileged://[::1]:8000"))
        #expect(!ProtectedService.isPrivileged("privileged:/x"))
    }

    @Test func aPageOfTheGatewaysOwnOriginIsAdmittedOnlyWhenListed() async throws {
        let port = try await ScriptGateway.shared.port
        // `Origin` the gateway's own (its scheme, the request's Host). KAAZING admits it; Gatehouse deliberately does
        // not (the Host is a DNS-rebinding page's own name): a page of another site resolved to the gateway's address
        // would pass. A service lists its own origin when its pages come from it.
        #expect(try await Self.upgrade(port: port, path: "/guarded", origin: "http://127.0.0.1:\(port)").status == 403)
        #expect(try await Self.upgrade(port: port, path: "/guarded", origin: "http://rebound.example:\(port)", host: "rebound.example:\(port)").status == 403)
        // An allowed page still is.
        #expect(try await Self.upgrade(port: port, path: "/guarded", origin: ScriptGateway.page).status == 101)
    }

    // MARK: The emulated transport

    @Test func aCreateWithoutSequenceNumbersOpensAndItsRequestsNeedNone() async throws {
        let port = try await ScriptGateway.shared.port
        // An older client sends no X-Sequence-No: KAAZING Gateway checks them only with `wse.specification` on.
        let created = try await Self.create(port: port, fields: ["X-WebSocket-Version: wseb-1.0"])
        let (upstream, downstreamPath) = try createdLocations(created, port: port)
        let downstream = try ScriptClient(port: port)
        await downstream.send("GET", downstreamPath, [])
        #expect(try await downstream.head().status == 200)
        for message in ["one", "two"] {
            let client = try ScriptClient(port: port)
            await client.send("POST", upstream, ["Content-Type: application/octet-stream", "Connection: close"],
                              body: KaazingEmulation.encode(.text(Array(message.utf8))))
            #expect(try await client.response().status == 200)
            #expect(try await downstream.frame() == .text(Array(message.utf8)))
        }
        // A malformed number is still refused.
        #expect(try await Self.create(port: port, fields: ["X-WebSocket-Version: wseb-1.0", "X-Sequence-No: -1"]).status == 400)
    }

    @Test(arguments: ["cb", "cbm"])
    func theBinaryEncodingsStreamBytesBothWays(encoding: String) async throws {
        let port = try await ScriptGateway.shared.port
        let created = try await Self.create(port: port, path: "/path/;e/\(encoding)?query", fields: ["X-WebSocket-Version: wseb-1.0", "X-Sequence-No: 10"])
        #expect(created.header("Content-Type") == "text/plain;charset=utf-8")
        let (upstream, downstreamPath) = try createdLocations(created, port: port)
        let downstream = try ScriptClient(port: port)
        await downstream.send("GET", downstreamPath, ["X-Sequence-No: 11"])
        let head = try await downstream.head()
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == "application/octet-stream")
        // Every byte value, as bytes (not text): before, `cb` refused it ("the body is not UTF-8").
        let payload = (0...255).map(UInt8.init)
        let client = try ScriptClient(port: port)
        await client.send("POST", upstream, ["Content-Type: application/octet-stream", "X-Sequence-No: 11", "Connection: close"],
                          body: KaazingEmulation.encode(.binary(payload)))
        #expect(try await client.response().status == 200)
        // The downstream's bytes exactly as the script reads them: 0x80, the length, the payload.
        #expect(try await downstream.read(3 + 256) == [0x80, 0x82, 0x00] + payload)
    }

    @Test func aChunkedUpstreamBodyIsTakenWithoutItsChunksAndBounded() async throws {
        let port = try await ScriptGateway.shared.port
        let created = try await Self.create(port: port, fields: ["X-WebSocket-Version: wseb-1.0", "X-Sequence-No: 1"])
        let (upstream, downstreamPath) = try createdLocations(created, port: port)
        let downstream = try ScriptClient(port: port)
        await downstream.send("GET", downstreamPath, ["X-Sequence-No: 2"])
        #expect(try await downstream.head().status == 200)
        // A frame cut across two chunks (KAAZING's Java client sends its upstream chunked), then the last chunk.
        let frame = KaazingEmulation.encode(.binary(Array(repeating: 0x0D, count: 200)))
        func chunk(_ bytes: ArraySlice<UInt8>) -> [UInt8] { Array((String(bytes.count, radix: 16) + "\r\n").utf8) + bytes + Array("\r\n".utf8) }
        let client = try ScriptClient(port: port)
        await client.send("POST", upstream, ["Content-Type: application/octet-stream", "X-Sequence-No: 2", "Transfer-Encoding: chunked"], length: false)
        await client.connection.send(chunk(frame[..<50]))
        try await Task.sleep(for: .milliseconds(20))
        await client.connection.send(chunk(frame[50...]) + Array("0\r\n\r\n".utf8))
        #expect(try await client.response().status == 200)
        #expect(try await downstream.frame() == .binary(Array(repeating: 0x0D, count: 200)))
        // Chunks beyond twice the largest message (and a little): 413, the connection ends.
        let big = [UInt8](repeating: 0x41, count: 1 << 20)
        await client.send("POST", upstream, ["Content-Type: application/octet-stream", "X-Sequence-No: 3", "Transfer-Encoding: chunked"], length: false)
        var refused: RawHTTPResponse?
        for _ in 0..<3 where refused == nil {
            guard await client.connection.send(chunk(big[...])) else { break }
        }
        refused = try await client.response()
        #expect(refused?.status == 413)
    }

    @Test func acceptCommandsOtherThanPingAreRefused() async throws {
        let port = try await ScriptGateway.shared.port
        let refused = try await Self.create(port: port, fields: ["X-WebSocket-Version: wseb-1.0", "X-Sequence-No: 1", "X-Accept-Commands: not-ping"])
        #expect(refused.status == 400)
        #expect(refused.json?["error"] == "invalid_request")
        #expect(try await Self.create(port: port, fields: ["X-WebSocket-Version: wseb-1.0", "X-Sequence-No: 1", "X-Accept-Commands: ping"]).status == 201)
    }

    @Test func aDownstreamOrUpstreamURLWithoutItsSessionIsNotFound() async throws {
        let port = try await ScriptGateway.shared.port
        // Even behind a realm: never challenged, never relayed upstream.
        for target in ["/basic/;e/db", "/basic/;e/db?.ksn=1", "/path/;e/db", "/basic/;e/ub"] {
            let answer = try await RawHTTPConnection.exchange(port: port, target: target, method: target.contains("ub") ? "POST" : "GET")
            #expect(answer.status == 404, "\(target)")
        }
    }

    @Test func aPlainUpgradeToAnApplicationTokenRealmIsForbidden() async throws {
        let port = try await ScriptGateway.shared.port
        // A browser's WebSocket (it sends Origin) cannot answer an `Application Token` challenge: 403, not 401.
        #expect(try await Self.upgrade(port: port, path: "/token", origin: "http://127.0.0.1:\(port)").status == 403)
        #expect(try await Self.upgrade(port: port, path: "/token", origin: ScriptGateway.page).status == 403)
        // A client without Origin (Gatehouse's own SDK) is challenged, and answers with its token (GatewayWebSocketTests).
        #expect(try await Self.upgrade(port: port, path: "/token", origin: nil).status == 401)
        // KAAZING's client, through its extended handshake, is challenged inside the WebSocket.
        let wire = try await KaazingWire.open(port: port, path: "/token")
        try await wire.send(KaazingHandshake.Request(target: "/token", fields: [("WebSocket-Protocol", ""), ("Sec-WebSocket-Protocol", "")]))
        let inner = try await wire.answer()
        #expect(inner.status == 401)
        #expect(inner.value(of: "WWW-Authenticate") == "Application Token")
    }
}
