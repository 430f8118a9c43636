import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// k3po `specification/wse/text.encoding/*/request.rpt` (`;e/ctm`: upstream text whose code points are the bytes,
/// downstream `windows-1252`, every byte one character) and `text.escaped.encoding/*/request.rpt` (`;e/ctem`: the same,
/// with NUL, LF, CR and DEL escaped after `0x7F` — downstream `0x7F 0x30`, `n`, `r`, `0x7F`; upstream `0x7F` and the
/// byte, as KAAZING's JavaScript client sends them where the browser's XHR loses those bytes), through the real
/// gateway, the client's side byte for byte. Each test is named after its script.
///
/// Not played: `text.escaped.encoding/echo.binary.payload.length.0`, whose upstream `[0xC2 0x80 0x7F 0x3F]` unescapes
/// to a frame of 63 bytes that never come (KAAZING Gateway's own `TextEscapedEncodingIT` ignores it: "Bug Gateway
/// #254").
@Suite(.timeLimit(.minutes(3))) struct WSETextEncodingScripts {
    /// This suite's client address (ScriptClient's `source`).
    static let source = "127.0.0.9"

    /// Every byte value, as the scripts' `wse:allBytes()`.
    static let allBytes = (0...255).map { UInt8($0) }

    /// `wse:encodeBytesAsUtf8`: each byte a code point, in UTF-8.
    static func utf8(_ bytes: [UInt8]) -> [UInt8] { Array(String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) })).utf8) }

    /// `wse:escapeBytesForUtf8`: the upstream's escapes (NUL as `0x7F 0x00`).
    static func escapedForUTF8(_ bytes: [UInt8]) -> [UInt8] {
        bytes.flatMap { byte -> [UInt8] in
            switch byte {
            case 0x00: [0x7F, 0x00]
            case 0x0A: [0x7F, 0x6E]
            case 0x0D: [0x7F, 0x72]
            case 0x7F: [0x7F, 0x7F]
            default: [byte]
            }
        }
    }

    /// `wse:escapeBytesForWindows1252`: the downstream's escapes (NUL as `0x7F 0x30`).
    static func escapedForWindows1252(_ bytes: [UInt8]) -> [UInt8] {
        bytes.flatMap { byte -> [UInt8] in
            switch byte {
            case 0x00: [0x7F, 0x30]
            case 0x0A: [0x7F, 0x6E]
            case 0x0D: [0x7F, 0x72]
            case 0x7F: [0x7F, 0x7F]
            default: [byte]
            }
        }
    }

    /// Opens on `encoding`, posts `written` (`text/plain;charset=utf-8`) in `pieces` (the script's
    /// `write await WRITE_SECOND_FRAGMENT`: the rest after a pause), and reads `expected` on the downstream exactly.
    static func echo(_ encoding: String, _ written: [UInt8], splitAfter split: Int? = nil, expecting expected: [UInt8]) async throws {
        let port = try await ScriptGateway.shared.port
        let opened = try await WSEScript.open(port: port, from: Self.source, encoding: encoding)
        // The encoding's own URLs, as KAAZING Gateway hands them back (`ctem` → `utem`, `dtem`).
        let segments = KaazingEmulation.sessionSegments(forCreate: encoding)
        #expect(opened.upstream.contains("/;e/\(segments.upstream)/") && opened.downstreamPath.contains("/;e/\(segments.downstream)/"))
        let upstream = try ScriptClient(port: port, from: Self.source)
        let fields = ["Content-Type: text/plain;charset=utf-8", "X-Sequence-No: \(opened.sequence + 1)", "Content-Length: \(written.count)"]
        if let split {
            await upstream.write("POST", opened.upstream, fields, body: Array(written.prefix(split)))
            try await Task.sleep(for: .milliseconds(100))
            await upstream.connection.send(Array(written.dropFirst(split)))
        } else {
            await upstream.write("POST", opened.upstream, fields, body: written)
        }
        #expect(try await upstream.response().status == 200)
        #expect(try await opened.downstream.read(expected.count) == expected)
    }

    @Test("text.encoding/echo.binary.payload.all.byte.values") func textAllByteValues() async throws {
        try await Self.echo("ctm", [0xC2, 0x80, 0xC2, 0x82, 0x00] + Self.utf8(Self.allBytes), expecting: [0x80, 0x82, 0x00] + Self.allBytes)
    }

    @Test("text.encoding/echo.binary.payload.length.0") func textPayloadLength0() async throws {
        try await Self.echo("ctm", [0xC2, 0x80, 0x00], expecting: [0x80, 0x00])
    }

    @Test("text.encoding/echo.binary.with.fragmented.encoded.byte") func textFragmentedEncodedByte() async throws {
        try await Self.echo("ctm", [0xC2, 0x80, 0x01, 0xC2, 0x84], splitAfter: 4, expecting: [0x80, 0x01, 0x84])
    }

    @Test("text.encoding/echo.text.with.multibyte.utf8") func textMultibyteUTF8() async throws {
        try await Self.echo("ctm", [0xC2, 0x81, 0x06, 0x41, 0x42, 0x43, 0xC3, 0xA2, 0xC2, 0x82, 0xC2, 0xAC],
                            expecting: [0x81, 0x06, 0x41, 0x42, 0x43, 0xE2, 0x82, 0xAC])
    }

    @Test("text.escaped.encoding/echo.binary.payload.all.byte.values") func escapedAllByteValues() async throws {
        try await Self.echo("ctem", [0xC2, 0x80, 0xC2, 0x82, 0x00] + Self.escapedForUTF8(Self.utf8(Self.allBytes)),
                            expecting: [0x80, 0x82, 0x7F, 0x30] + Self.escapedForWindows1252(Self.allBytes))
    }

    @Test("text.escaped.encoding/echo.binary.with.fragmented.encoded.byte") func escapedFragmentedEncodedByte() async throws {
        try await Self.echo("ctem", [0xC2, 0x80, 0x01, 0xC2, 0x84], splitAfter: 4, expecting: [0x80, 0x01, 0x84])
    }

    @Test("text.escaped.encoding/echo.binary.with.fragmented.escaped.byte") func escapedFragmentedEscapedByte() async throws {
        try await Self.echo("ctem", [0xC2, 0x80, 0x01, 0x7F, 0x6E], splitAfter: 4, expecting: [0x80, 0x01, 0x7F, 0x6E])
    }

    @Test("text.escaped.encoding/echo.escaped.characters") func escapedCharacters() async throws {
        try await Self.echo("ctem", [0xC2, 0x80, 0x04, 0x7F, 0x00, 0x7F, 0x72, 0x7F, 0x6E, 0x7F, 0x7F],
                            expecting: [0x80, 0x04, 0x7F, 0x30, 0x7F, 0x72, 0x7F, 0x6E, 0x7F, 0x7F])
    }

    /// `cte` (text, not mixed) hands back `ute`/`dte` and escapes the same way.
    @Test func theTextEscapedCreateEscapesToo() async throws {
        try await Self.echo("cte", [0xC2, 0x80, 0x02, 0x7F, 0x00, 0x0A], expecting: [0x80, 0x02, 0x7F, 0x30, 0x7F, 0x6E])
    }
}
