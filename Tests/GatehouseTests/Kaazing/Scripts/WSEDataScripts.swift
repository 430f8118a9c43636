import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// k3po `specification/wse/…/data/*/request.rpt`: messages through an emulated WebSocket on the binary encoding
/// (`;e/cbm`), echoed by the upstream through the real gateway; the client's side byte for byte (frame type, length
/// bytes as the script writes them, payload) and the downstream read exactly. Each test is named after its script.
@Suite(.timeLimit(.minutes(3))) struct WSEDataScripts {
    /// This suite's client address (ScriptClient's `source`).
    static let source = "127.0.0.3"

    /// Opens, sends `written` upstream (answered `200`), and reads `expected` on the downstream exactly.
    static func echo(_ written: [UInt8], expecting expected: [UInt8]) async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source)
        let upstream = try await WSEScript.upstream(port: port, opened, body: written)
        #expect(try await upstream.response().status == 200)
        #expect(try await opened.downstream.read(expected.count) == expected)
    }

    @Test("data/echo.binary.payload.length.0") func echoBinaryPayloadLength0() async throws {
        try await Self.echo([0x80, 0x00], expecting: [0x80, 0x00])
    }

    /// The script's upstream is chunked and never ends (`write [0x80 0x7F] ${client127}` with
    /// `Transfer-Encoding: chunked`): Gatehouse hands an upstream request's frames over when its body ends, so the
    /// chunks here end with the last chunk. Deliberate: every KAAZING client ends each upstream request (the
    /// JavaScript client's carry `RECONNECT` and a length; the Java client's are chunked and ended).
    @Test("data/echo.binary.payload.length.127") func echoBinaryPayloadLength127() async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source)
        let payload = WSEScript.randomBytes(127)
        let frame = [0x80, 0x7F] + payload
        let upstream = try ScriptClient(port: port, from: Self.source)
        await upstream.write("POST", opened.upstream, ["Content-Type: application/octet-stream", "X-Sequence-No: \(opened.sequence + 1)",
                                                       "X-Next-Protocol: wse/1.0", "Transfer-Encoding: chunked"])
        await upstream.connection.send(Array("81\r\n".utf8) + frame + Array("\r\n0\r\n\r\n".utf8))
        #expect(try await upstream.response().status == 200)
        #expect(try await opened.downstream.read(129) == frame)
    }

    @Test("data/echo.binary.payload.length.128") func echoBinaryPayloadLength128() async throws {
        let payload = WSEScript.randomBytes(128)
        try await Self.echo([0x80, 0x81, 0x00] + payload, expecting: [0x80, 0x81, 0x00] + payload)
    }

    @Test("data/echo.binary.payload.length.65535") func echoBinaryPayloadLength65535() async throws {
        let payload = WSEScript.randomBytes(65535)
        try await Self.echo([0x80, 0x83, 0xFF, 0x7F] + payload, expecting: [0x80, 0x83, 0xFF, 0x7F] + payload)
    }

    @Test("data/echo.binary.payload.length.65536") func echoBinaryPayloadLength65536() async throws {
        let payload = WSEScript.randomBytes(65536)
        try await Self.echo([0x80, 0x84, 0x80, 0x00] + payload, expecting: [0x80, 0x84, 0x80, 0x00] + payload)
    }

    @Test("data/echo.text.payload.length.0") func echoTextPayloadLength0() async throws {
        try await Self.echo([0x81, 0x00], expecting: [0x81, 0x00])
    }

    @Test("data/echo.text.payload.length.127") func echoTextPayloadLength127() async throws {
        let payload = WSEScript.randomUTF8(127)
        try await Self.echo([0x81, 0x7F] + payload, expecting: [0x81, 0x7F] + payload)
    }

    @Test("data/echo.text.payload.length.128") func echoTextPayloadLength128() async throws {
        let payload = WSEScript.randomUTF8(128)
        try await Self.echo([0x81, 0x81, 0x00] + payload, expecting: [0x81, 0x81, 0x00] + payload)
    }

    @Test("data/echo.text.payload.length.65535") func echoTextPayloadLength65535() async throws {
        let payload = WSEScript.randomUTF8(65535)
        try await Self.echo([0x81, 0x83, 0xFF, 0x7F] + payload, expecting: [0x81, 0x83, 0xFF, 0x7F] + payload)
    }

    @Test("data/echo.text.payload.length.65536") func echoTextPayloadLength65536() async throws {
        let payload = WSEScript.randomUTF8(65536)
        try await Self.echo([0x81, 0x84, 0x80, 0x00] + payload, expecting: [0x81, 0x84, 0x80, 0x00] + payload)
    }

    /// A text frame of the older, delimited form (`0x00` … `0xFF`) comes back in the length-prefixed one.
    @Test("data/echo.text.delimited.payload.length.0") func echoTextDelimitedPayloadLength0() async throws {
        try await Self.echo([0x00, 0xFF], expecting: [0x81, 0x00])
    }

    @Test("data/echo.text.delimited.payload.length.20") func echoTextDelimitedPayloadLength20() async throws {
        let payload = Array(WSEScript.randomUTF8(20).map { $0 == 0xFF ? 0x41 : $0 })
        try await Self.echo([0x00] + payload + [0xFF], expecting: [0x81, 0x14] + payload)
    }

    /// The body's two writes cut a character (`€`) in two, with a pause between them.
    @Test("data/echo.text.with.fragmented.character") func echoTextWithFragmentedCharacter() async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source)
        let upstream = try ScriptClient(port: port, from: Self.source)
        await upstream.write("POST", opened.upstream, ["Content-Type: application/octet-stream", "X-Sequence-No: \(opened.sequence + 1)",
                                                       "content-length: 8"], body: [0x81, 0x06, 0x41, 0x42, 0x43, 0xE2, 0x82])
        try await Task.sleep(for: .milliseconds(50))
        await upstream.connection.send([0xAC])
        #expect(try await upstream.response().status == 200)
        #expect(try await opened.downstream.read(8) == [0x81, 0x06, 0x41, 0x42, 0x43, 0xE2, 0x82, 0xAC])
    }

    /// A text message that is not UTF-8: `400`, and the downstream ends with `CLOSE`, `RECONNECT` and its close.
    static func invalidText(_ frame: [UInt8]) async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source)
        let upstream = try await WSEScript.upstream(port: port, opened, body: frame, halfClose: true)
        #expect(try await upstream.response().status == 400)
        #expect(await upstream.closed())
        #expect(try await opened.downstream.read(8) == [0x01, 0x30, 0x32, 0xFF, 0x01, 0x30, 0x31, 0xFF])
        #expect(await opened.downstream.closed())
    }

    /// 20 bytes that are not UTF-8 (a continuation byte first, an unfinished sequence last).
    static let invalidUTF8: [UInt8] = [0x80] + Array("abcdefghijklmnopq".utf8) + [0xE2, 0x82]

    @Test("data/client.send.text.invalid.utf8") func clientSendTextInvalidUtf8() async throws {
        try await Self.invalidText([0x81, 0x14] + Self.invalidUTF8)
    }

    @Test("data/client.send.text.delimited.invalid.utf8") func clientSendTextDelimitedInvalidUtf8() async throws {
        try await Self.invalidText([0x00] + Self.invalidUTF8 + [0xFF])
    }
}
