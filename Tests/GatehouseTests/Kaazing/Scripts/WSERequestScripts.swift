import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// k3po `specification/wse/…/{upstream,downstream,control,browsers}/*`: the emulated transport's upstream and
/// downstream requests, `PING`/`PONG`, and the browsers' query parameters, the client's side byte for byte against the
/// real gateway. Each test is named after its script. Not played: `upstream/client.send.overlapping.request` (it needs
/// an upstream request's frames delivered before its body ends, which Gatehouse does not do: each request's frames
/// go over when it is whole), `browsers/client.send.kb.parameter.in.downstream.request` (Gatehouse raises a `.kb`
/// under 64 KiB to 64 KiB, so a 1 KiB downstream does not end after its first KiB), `browsers/client.request.padded.response`
/// and the `server.*`/`*.subsequent.*` scripts (an upstream acting on cue).
@Suite(.timeLimit(.minutes(3))) struct WSERequestScripts {
    /// This suite's client address: none, each create comes from a fresh one (``WSEScript/freshSource()``).
    static let source: String? = nil
    static let closeAndReconnect: [UInt8] = [0x01, 0x30, 0x32, 0xFF, 0x01, 0x30, 0x31, 0xFF]

    /// The session ended: its downstream reads `CLOSE`, `RECONNECT` and its end.
    static func expectEnded(_ opened: WSEScript.Opened) async throws {
        #expect(try await opened.downstream.read(8) == closeAndReconnect)
        #expect(await opened.downstream.closed())
    }

    /// The create's `201` and URLs, without a downstream.
    static func created(_ port: Int, target: String = "/path/;e/cbm?query", fields: [String]? = nil) async throws
        -> (sequence: Int, upstream: String, downstream: String) {
        let sequence = WSEScript.randomSequence()
        let (answer, _) = try await WSEScript.create(port: port, from: source, target: target,
                                                     fields: fields ?? ["Content-Length: 0", "X-WebSocket-Version: wseb-1.0", "X-Sequence-No: \(sequence)"])
        let (upstream, downstream) = try createdLocations(answer, port: port)
        return (sequence, upstream, downstream)
    }

    // MARK: upstream

    @Test("upstream/request.out.of.order") func upstreamRequestOutOfOrder() async throws {
        let port = try await ScriptGateway.shared.port
        let (sequence, upstream, _) = try await Self.created(port)
        let client = try ScriptClient(port: port, from: Self.source)
        await client.write("POST", upstream, ["Content-Type: application/octet-stream", "X-Sequence-No: \(sequence + 2)", "Content-Length: 11"],
                           body: [0x80, 0x05] + WSEScript.randomBytes(5) + [0x01, 0x30, 0x31, 0xFF], halfClose: true)
        #expect((400..<500).contains(try await client.response().status))
    }

    @Test("upstream/zero.content.length.request") func upstreamZeroContentLengthRequest() async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source)
        let client = try await WSEScript.upstream(port: port, opened, body: [], halfClose: true)
        #expect((400..<500).contains(try await client.response().status))
        try await Self.expectEnded(opened)
    }

    @Test("upstream/request.method.not.post") func upstreamRequestMethodNotPost() async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source)
        let client = try ScriptClient(port: port, from: Self.source)
        await client.write("PUT", opened.upstream, ["Content-Type: application/octet-stream", "X-Sequence-No: \(opened.sequence + 1)",
                                                    "Content-Length: 11"], body: [0x80, 0x05] + WSEScript.randomBytes(5) + [0x01, 0x30, 0x31, 0xFF],
                           halfClose: true)
        #expect((400..<500).contains(try await client.response().status))
        try await Self.expectEnded(opened)
    }

    @Test("upstream/client.send.multiple.requests") func upstreamClientSendMultipleRequests() async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source)
        for (offset, data) in ["data1", "data2"].enumerated() {
            let client = try ScriptClient(port: port, from: Self.source)
            await client.write("POST", opened.upstream, ["Content-Type: application/octet-stream", "X-Next-Protocol: wse/1.0",
                                                         "X-Sequence-No: \(opened.sequence + 1 + offset)", "Content-Length: 11"],
                               body: [0x80, 0x05] + Array(data.utf8) + [0x01, 0x30, 0x31, 0xFF], halfClose: true)
            #expect(try await client.response().status == 200)
            #expect(await client.closed())
        }
        #expect(try await opened.downstream.read(14) == [0x80, 0x05] + Array("data1".utf8) + [0x80, 0x05] + Array("data2".utf8))
    }

    // MARK: downstream

    @Test("downstream/request.out.of.order") func downstreamRequestOutOfOrder() async throws {
        let port = try await ScriptGateway.shared.port
        let (sequence, _, downstream) = try await Self.created(port)
        let client = try ScriptClient(port: port, from: Self.source)
        await client.write("GET", downstream, ["X-Sequence-No: \(sequence + 2)", "Content-Length: 0"], halfClose: true)
        #expect((400..<500).contains(try await client.response().status))
    }

    /// The downstream asked with `POST` (`body`: the script's `>|<`), then the client's close ends it.
    static func postedDownstream(fields: [String] = [], body: [UInt8] = []) async throws {
        let port = try await ScriptGateway.shared.port
        let (sequence, upstream, downstreamPath) = try await Self.created(port)
        let downstream = try ScriptClient(port: port, from: Self.source)
        await downstream.write("POST", downstreamPath, fields + ["X-Sequence-No: \(sequence + 1)", "Content-Length: \(body.count)"], body: body,
                               halfClose: true)
        let head = try await downstream.head()
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == "application/octet-stream")
        #expect(head.header("Connection") == "close")
        let client = try ScriptClient(port: port, from: Self.source)
        await client.write("POST", upstream, ["Content-Type: application/octet-stream", "X-Sequence-No: \(sequence + 1)", "Content-Length: 8"],
                           body: closeAndReconnect, halfClose: true)
        #expect(try await client.response().status == 200)
        #expect(try await downstream.read(8) == closeAndReconnect)
    }

    @Test("downstream/request.method.post") func downstreamRequestMethodPost() async throws {
        try await Self.postedDownstream()
    }

    @Test("downstream/request.method.post.with.body") func downstreamRequestMethodPostWithBody() async throws {
        try await Self.postedDownstream(body: Array(">|<".utf8))
    }

    @Test("downstream/request.method.not.get.or.post") func downstreamRequestMethodNotGetOrPost() async throws {
        let port = try await ScriptGateway.shared.port
        let (sequence, _, downstream) = try await Self.created(port)
        let client = try ScriptClient(port: port, from: Self.source)
        await client.write("HEAD", downstream, ["X-Sequence-No: \(sequence + 1)", "Content-Length: 0"], halfClose: true)
        #expect((400..<500).contains(try await client.head().status))
    }

    /// The downstream names the page's own origin; the create named none (the script's): Gatehouse binds a session
    /// to its create's origin (issue 54, finding 9), so the create names it too here — a browser's page sends the
    /// same `Origin` on each of its requests.
    @Test("downstream/request.header.origin") func downstreamRequestHeaderOrigin() async throws {
        let port = try await ScriptGateway.shared.port
        let origin = "Origin: http://127.0.0.1:\(port)"
        let sequence = WSEScript.randomSequence()
        let (answer, _) = try await WSEScript.create(port: port, from: Self.source,
                                                     fields: [origin, "Content-Length: 0", "X-WebSocket-Version: wseb-1.0", "X-Sequence-No: \(sequence)"])
        let (upstream, downstreamPath) = try createdLocations(answer, port: port)
        let downstream = try ScriptClient(port: port, from: Self.source)
        await downstream.write("GET", downstreamPath, [origin, "X-Sequence-No: \(sequence + 1)", "Content-Length: 0"], halfClose: true)
        #expect(try await downstream.head().status == 200)
        let client = try ScriptClient(port: port, from: Self.source)
        await client.write("POST", upstream, [origin, "Content-Type: application/octet-stream", "X-Sequence-No: \(sequence + 1)", "Content-Length: 8"],
                           body: Self.closeAndReconnect, halfClose: true)
        #expect(try await client.response().status == 200)
        #expect(try await downstream.read(8) == Self.closeAndReconnect)
    }

    // MARK: control

    /// A create saying `X-Accept-Commands: ping` (or not), its downstream, and one upstream request with `frames`.
    static func control(acceptsPing: Bool, frames: [UInt8]) async throws -> (status: Int, downstream: ScriptClient) {
        let port = try await ScriptGateway.shared.port
        let sequence = WSEScript.randomSequence()
        let (answer, _) = try await WSEScript.create(port: port, from: source, fields: ["Content-Length: 0", "X-WebSocket-Version: wseb-1.0"]
                                                     + (acceptsPing ? ["X-Accept-Commands: ping"] : []) + ["X-Sequence-No: \(sequence)"])
        let (upstream, downstreamPath) = try createdLocations(answer, port: port)
        let downstream = try ScriptClient(port: port, from: source)
        await downstream.write("GET", downstreamPath, ["X-Sequence-No: \(sequence + 1)", "Content-Length: 0"], halfClose: true)
        #expect(try await downstream.head().status == 200)
        let client = try ScriptClient(port: port, from: source)
        await client.write("POST", upstream, ["Content-Type: application/octet-stream", "X-Sequence-No: \(sequence + 1)",
                                              "Content-Length: \(frames.count + 4)"], body: frames + [0x01, 0x30, 0x31, 0xFF], halfClose: true)
        return (try await client.response().status, downstream)
    }

    @Test("control/client.send.ping") func controlClientSendPing() async throws {
        let (status, downstream) = try await Self.control(acceptsPing: true, frames: [0x89, 0x00])
        #expect(status == 200)
        #expect(try await downstream.read(2) == [0x8A, 0x00])
    }

    @Test("control/client.send.pong") func controlClientSendPong() async throws {
        #expect(try await Self.control(acceptsPing: true, frames: [0x8A, 0x00]).status == 200)
    }

    /// A refused control frame: `400`, the session ends (`CLOSE`, `RECONNECT` downstream).
    static func refusedControl(acceptsPing: Bool, frames: [UInt8]) async throws {
        let (status, downstream) = try await Self.control(acceptsPing: acceptsPing, frames: frames)
        #expect(status == 400)
        #expect(try await downstream.read(8) == Self.closeAndReconnect)
        #expect(await downstream.closed())
    }

    @Test("control/client.send.invalid.ping") func controlClientSendInvalidPing() async throws {
        try await Self.refusedControl(acceptsPing: true, frames: [0x89, 0x01])
    }

    @Test("control/client.send.invalid.pong") func controlClientSendInvalidPong() async throws {
        try await Self.refusedControl(acceptsPing: true, frames: [0x8A, 0x01])
    }

    @Test("control/client.send.unexpected.ping") func controlClientSendUnexpectedPing() async throws {
        try await Self.refusedControl(acceptsPing: false, frames: [0x89, 0x00])
    }

    @Test("control/client.send.unexpected.pong") func controlClientSendUnexpectedPong() async throws {
        try await Self.refusedControl(acceptsPing: false, frames: [0x8A, 0x00])
    }

    // MARK: browsers

    /// Sequence numbers in `.ksn` (browsers that cannot set fields on every request), not `X-Sequence-No`.
    @Test("browsers/client.send.ksn.parameter") func browsersClientSendKsnParameter() async throws {
        let port = try await ScriptGateway.shared.port
        let (_, upstream, downstreamPath) = try await Self.created(port, target: "/path/;e/cb?.ksn=0",
                                                                   fields: ["Content-Length: 0", "X-WebSocket-Version: wseb-1.0"])
        let downstream = try ScriptClient(port: port, from: Self.source)
        await downstream.write("GET", downstreamPath + "?.ksn=1", ["Content-Length: 0"], halfClose: true)
        #expect(try await downstream.head().status == 200)
        let client = try ScriptClient(port: port, from: Self.source)
        await client.write("POST", upstream + "?.ksn=1", ["Content-Type: application/octet-stream", "Content-Length: 8"], body: Self.closeAndReconnect,
                           halfClose: true)
        #expect(try await client.response().status == 200)
        #expect(try await downstream.read(8) == Self.closeAndReconnect)
        #expect(await downstream.closed())
    }

    @Test("browsers/client.reconnect.downstream") func browsersClientReconnectDownstream() async throws {
        let port = try await ScriptGateway.shared.port
        let (sequence, _, downstreamPath) = try await Self.created(port, target: "/path/;e/cb?query")
        let first = try ScriptClient(port: port, from: Self.source)
        await first.write("GET", downstreamPath, ["X-Sequence-No: \(sequence + 1)", "Content-Length: 0"], halfClose: true)
        #expect(try await first.head().status == 200)
        let second = try ScriptClient(port: port, from: Self.source)
        await second.write("GET", downstreamPath, ["X-Sequence-No: \(sequence + 2)", "Content-Length: 0"], halfClose: true)
        let head = try await second.head()
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == "application/octet-stream")
        #expect(try await first.read(4) == [0x01, 0x30, 0x31, 0xFF])
        #expect(await first.closed())
    }
}
