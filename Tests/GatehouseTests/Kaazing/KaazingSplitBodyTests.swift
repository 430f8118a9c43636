import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// Issue 53: a request whose body arrives in reads after its head's (real networks and proxies split requests) is
/// answered. An emulated WebSocket's upstream `POST` whose body came later than its head was never answered (the
/// gateway held the client's reads while it waited for the body, and nothing resumed them) and its session died.
/// Each test writes the head, then the body in pieces with pauses, on a raw socket to the real gateway.
@Suite(.timeLimit(.minutes(3))) struct KaazingSplitBodyTests {
    /// Writes `head` and then `body` in `pieces` writes, `pause` apart.
    static func sendSplit(_ client: ScriptClient, head: String, body: [UInt8], pieces: Int, pause: Duration = .milliseconds(30)) async throws {
        await client.connection.send(head)
        let size = max(1, (body.count + pieces - 1) / pieces)
        var offset = 0
        while offset < body.count {
            try await Task.sleep(for: pause)
            await client.connection.send(Array(body[offset..<min(body.count, offset + size)]))
            offset += size
        }
    }

    /// An upstream body as KAAZING's JavaScript client sends it on the text encoding: each byte a code point.
    static func mixedText(_ frames: [UInt8]) -> [UInt8] {
        Array(String(String.UnicodeScalarView(frames.map { Unicode.Scalar($0 == 0 ? 0x100 : UInt32($0))! })).utf8)
    }

    /// Creates an emulated WebSocket on `service` (`ctm`, as the JavaScript client), attaches its downstream.
    static func open(port: Int, service: String, extra: [String] = []) async throws -> (upstream: String, downstream: ScriptClient) {
        let create = try ScriptClient(port: port)
        await create.send("GET", "/\(service)/;e/ctm?.kn=7", ["X-WebSocket-Version: wseb-1.0", "X-Sequence-No: 3", "X-Accept-Commands: ping",
                                                               "Connection: close"] + extra, length: false)
        let (upstream, downstreamPath) = try createdLocations(try await create.response(), port: port)
        let downstream = try ScriptClient(port: port)
        await downstream.send("GET", downstreamPath + "?.ksn=4&.kb=4096", [], length: false)
        #expect(try await downstream.head().status == 200)
        return (upstream, downstream)
    }

    @Test(arguments: ["path", "basic"])
    func anEmulatedUpstreamWhoseBodyComesInPiecesIsAnswered(service: String) async throws {
        let port = try await ScriptGateway.shared.port
        let credentials = service == "basic" ? ["Authorization: " + basicAuthorization("joe", "welcome")] : []
        let (upstream, downstream) = try await Self.open(port: port, service: service, extra: credentials)
        let message = Array("split across reads".utf8)
        let body = Self.mixedText(KaazingEmulation.encode(.text(message)) + KaazingEmulation.encode(.command(.reconnect)))
        let client = try ScriptClient(port: port)
        try await Self.sendSplit(client, head: "POST \(upstream)&.krn=0.5 HTTP/1.1\r\nHost: \(client.host)\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                 + "X-Sequence-No: 4\r\nContent-Length: \(body.count)\r\n\r\n", body: body, pieces: 3)
        #expect(try await client.response().status == 200)
        #expect(try await downstream.frame() == .text(message))
        // The session lives on: a second upload, its head itself cut in two, on the same connection.
        let again = Self.mixedText(KaazingEmulation.encode(.binary([0, 1, 2, 0xFF])) + KaazingEmulation.encode(.command(.reconnect)))
        let head = "POST \(upstream)&.krn=0.6 HTTP/1.1\r\nHost: \(client.host)\r\nX-Sequence-No: 5\r\nContent-Length: \(again.count)\r\n\r\n"
        await client.connection.send(String(head.prefix(20)))
        try await Self.sendSplit(client, head: String(head.dropFirst(20)), body: again, pieces: 4)
        #expect(try await client.response().status == 200)
        #expect(try await downstream.frame() == .binary([0, 1, 2, 0xFF]))
    }

    @Test func anEmulatedUploadOver64KiBInManyReadsIsEchoedWhole() async throws {
        let port = try await ScriptGateway.shared.port
        let (upstream, downstream) = try await Self.open(port: port, service: "path")
        // 100,000 bytes of every value: about 150 KB of text once each byte is a code point.
        let message = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let body = Self.mixedText(KaazingEmulation.encode(.binary(message)) + KaazingEmulation.encode(.command(.reconnect)))
        #expect(body.count > 64 * 1024)
        let client = try ScriptClient(port: port)
        try await Self.sendSplit(client, head: "POST \(upstream)&.krn=0.7 HTTP/1.1\r\nHost: \(client.host)\r\nX-Sequence-No: 4\r\n"
                                 + "Content-Length: \(body.count)\r\n\r\n", body: body, pieces: 12, pause: .milliseconds(10))
        #expect(try await client.response().status == 200)
        let echoed = try await downstream.frame()
        guard case .binary(let bytes) = echoed else { throw TestFailure("not a binary message: \(echoed)") }
        #expect(bytes.count == message.count)
        #expect(bytes == message)
    }

    @Test(arguments: ["http", "httpbasic"])
    func aRelayedPostWhoseBodyComesInPiecesIsAnswered(service: String) async throws {
        let port = try await ScriptGateway.shared.port
        let body = Array(String(repeating: "0123456789", count: 8_000).utf8)  // 80 KB
        let authorization = service == "httpbasic" ? "Authorization: " + basicAuthorization("joe", "welcome") + "\r\n" : ""
        let client = try ScriptClient(port: port)
        try await Self.sendSplit(client, head: "POST /\(service)/upload HTTP/1.1\r\nHost: \(client.host)\r\n\(authorization)"
                                 + "Content-Type: text/plain\r\nContent-Length: \(body.count)\r\n\r\n", body: body, pieces: 5)
        let answer = try await client.response()
        #expect(answer.status == 200)
        // The echo upstream describes what reached it: the whole body.
        #expect(answer.text.hasSuffix("body=" + String(decoding: body, as: UTF8.self)))
    }
}
