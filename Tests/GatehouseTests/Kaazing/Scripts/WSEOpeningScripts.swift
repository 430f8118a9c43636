import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// k3po `specification/wse/…/opening/*/handshake.request.rpt` (KAAZING's WebSocket Emulation specification, the
/// create request), the client's side played byte for byte against the real gateway. Each test is named after its
/// script's directory. Scripts of a misbehaving server (`response.body.*`, `response.header.*`,
/// `response.status.code.not.201`) test a client, not a gateway, and are not played.
@Suite(.timeLimit(.minutes(3))) struct WSEOpeningScripts {
    static let base = ["Content-Length: 0", "X-WebSocket-Version: wseb-1.0"]
    /// This suite's client address (its creates stay half-open: ScriptClient's `source`).
    static let source = "127.0.0.2"

    /// The create of most scripts with `extra` fields after `X-Sequence-No`, answered and closed (`read closed`).
    static func create(_ fields: [String], target: String = "/path/;e/cb?query", method: String = "POST",
                       body: [UInt8] = []) async throws -> RawHTTPResponse {
        let port = try await ScriptGateway.shared.port
        let (answer, closed) = try await WSEScript.create(port: port, from: Self.source, target: target, method: method, fields: fields, body: body)
        #expect(closed, "read closed")
        return answer
    }

    /// `read http:status "201"`, `Content-Type: text/plain;charset=utf-8` and the two URLs of the service's path.
    static func expectCreated(_ answer: RawHTTPResponse, path: String = "/path/") async throws {
        let port = try await ScriptGateway.shared.port
        #expect(answer.status == 201)
        #expect(answer.header("Content-Type")?.lowercased() == "text/plain;charset=utf-8")
        let lines = answer.text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines[2].isEmpty, "two URLs, each ended by a line feed")
        for line in lines.prefix(2) { #expect(line.hasPrefix("http://127.0.0.1:\(port)\(path)"), "\(line)") }
    }

    @Test("opening/connection.established") func connectionEstablished() async throws {
        try await Self.expectCreated(try await Self.create(Self.base + ["X-Sequence-No: \(WSEScript.randomSequence())"]))
    }

    @Test("opening/connection.established.no.websocket.extensions") func connectionEstablishedNoWebSocketExtensions() async throws {
        let answer = try await Self.create(Self.base + ["X-Sequence-No: \(WSEScript.randomSequence())"])
        try await Self.expectCreated(answer)
        #expect(answer.header("X-WebSocket-Extensions") == nil)
    }

    /// Deliberately not KAAZING's answer on a service that admits only other pages (`allowedOrigins`): KAAZING admits
    /// a page of the gateway's own origin there; Gatehouse admits it only where it is listed (that origin is made of
    /// the request's `Host`, which a DNS-rebinding page chooses).
    @Test("opening/request.header.origin") func requestHeaderOrigin() async throws {
        let port = try await ScriptGateway.shared.port
        // The page's own origin (the script's `Origin: http://localhost:8080` to `localhost:8080`): admitted where
        // no origin is constrained, refused on `/guarded`, which names another page.
        for (path, created) in [("/path", true), ("/guarded", false)] {
            let answer = try await Self.create(["Origin: http://127.0.0.1:\(port)", "Content-Length: 0", "X-WebSocket-Version: wseb-1.0",
                                                "X-Sequence-No: \(WSEScript.randomSequence())"], target: path + "/;e/cb?query")
            if created {
                try await Self.expectCreated(answer, path: path + "/")
            } else {
                #expect(answer.status == 403)
            }
        }
    }

    @Test("opening/request.header.x.accept.commands.not.ping") func requestHeaderXAcceptCommandsNotPing() async throws {
        let answer = try await Self.create(Self.base + ["X-Accept-Commands: not-ping", "X-Sequence-No: \(WSEScript.randomSequence())"])
        #expect((400..<500).contains(answer.status))
    }

    /// Deliberately not the script's `4xx`: KAAZING Gateway checks sequence numbers only with its `wse.specification`
    /// switch on (off by default), and older KAAZING clients send none; the session then checks none of its requests.
    @Test("opening/request.header.x.sequence.number.missing") func requestHeaderXSequenceNumberMissing() async throws {
        try await Self.expectCreated(try await Self.create(Self.base))
    }

    @Test("opening/request.header.x.sequence.number.negative") func requestHeaderXSequenceNumberNegative() async throws {
        #expect((400..<500).contains(try await Self.create(Self.base + ["X-Sequence-No: -1"]).status))
    }

    @Test("opening/request.header.x.sequence.number.non.integer") func requestHeaderXSequenceNumberNonInteger() async throws {
        #expect((400..<500).contains(try await Self.create(Self.base + ["X-Sequence-No: non-integer"]).status))
    }

    @Test("opening/request.header.x.sequence.number.out.of.range") func requestHeaderXSequenceNumberOutOfRange() async throws {
        #expect((400..<500).contains(try await Self.create(Self.base + ["X-Sequence-No: 9007199254740992"]).status))
    }

    /// Deliberately not the script's echo of an extension: Gatehouse negotiates no emulated-transport extension but
    /// KAAZING's `x-kaazing-idle-timeout` (`IdleTimeoutExtensionScripts`), so the create asking for `primary` and
    /// `secondary` is `201` without `X-WebSocket-Extensions` — allowed by the specification, as for any server that
    /// supports none of those asked.
    @Test("opening/request.header.x.websocket.extensions") func requestHeaderXWebSocketExtensions() async throws {
        let answer = try await Self.create(Self.base + ["X-Sequence-No: \(WSEScript.randomSequence())", "X-WebSocket-Extensions: primary",
                                                        "X-WebSocket-Extensions: secondary"])
        try await Self.expectCreated(answer)
        #expect(answer.header("X-WebSocket-Extensions") == nil)
    }

    @Test("opening/request.header.x.websocket.protocol") func requestHeaderXWebSocketProtocol() async throws {
        let answer = try await Self.create(Self.base + ["X-Sequence-No: \(WSEScript.randomSequence())", "X-WebSocket-Protocol: primary",
                                                        "X-WebSocket-Protocol: secondary"])
        try await Self.expectCreated(answer)
        // The upstream's choice (the echo selects the first offered).
        #expect(answer.header("X-WebSocket-Protocol") == "primary")
    }

    @Test("opening/request.header.x.websocket.version.missing") func requestHeaderXWebSocketVersionMissing() async throws {
        let answer = try await Self.create(["X-Sequence-No: \(WSEScript.randomSequence())", "Content-Length: 0"])
        #expect((400..<500).contains(answer.status))
    }

    @Test("opening/request.header.x.websocket.version.not.wseb-1.0") func requestHeaderXWebSocketVersionNotWseb10() async throws {
        let answer = try await Self.create(["Content-Length: 0", "X-WebSocket-Version: not wseb-1.0", "X-Sequence-No: \(WSEScript.randomSequence())"])
        #expect((400..<500).contains(answer.status))
    }

    @Test("opening/request.method.get") func requestMethodGet() async throws {
        try await Self.expectCreated(try await Self.create(["X-WebSocket-Version: wseb-1.0", "X-Sequence-No: \(WSEScript.randomSequence())"],
                                                          target: "/path/;e/cb?query", method: "GET"))
    }

    @Test("opening/request.method.not.post.or.get") func requestMethodNotPostOrGet() async throws {
        let port = try await ScriptGateway.shared.port
        let client = try ScriptClient(port: port, from: Self.source)
        await client.write("HEAD", "/path/;e/cb?query", Self.base + ["X-Sequence-No: \(WSEScript.randomSequence())"], halfClose: true)
        #expect((400..<500).contains(try await client.head().status))
        #expect(await client.closed())
    }

    @Test("opening/request.with.body") func requestWithBody() async throws {
        let answer = try await Self.create(["X-WebSocket-Version: wseb-1.0", "X-Sequence-No: \(WSEScript.randomSequence())", "Content-Length: 3"],
                                           target: "/path/;e/cb?query", body: Array(">|<".utf8))
        try await Self.expectCreated(answer)
    }
}
