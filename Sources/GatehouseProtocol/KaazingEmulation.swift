/// KAAZING's emulated WebSocket over HTTP ("WSE", `wseb-1.0`), as KAAZING Gateway 5 and its JavaScript client speak it
/// (the client's `WebSocketEmulatedProxy` and `WebSocketEmulatedProxyDownstream`; KAAZING's "WebSocket Emulation
/// Protocol" specification), for browsers whose WebSocket cannot get through:
///
/// 1. **create**: `GET|POST <service path>/;e/ctm?.kn=<random>` (`cb`, `cbm`, `ct`, `ctm`, `cte`, `ctem`: the encodings) with
///    `X-WebSocket-Version: wseb-1.0`, `X-Sequence-No: n` and the application's protocols in `X-WebSocket-Protocol`;
///    decided by the service's realm like any request (a `401` answered inside a `200` envelope when the client asks
///    for one, ``envelopeProtocol``); accepted: `201`, `text/plain;charset=utf-8`, the body ``createdBody(upstream:downstream:)``;
/// 2. **downstream**: `GET <downstream URL>?.ksn=n+1&…`: one long `200` response, `text/plain;charset=windows-1252`, whose
///    body is the server's frames (``encode(_:)``) as they come, ending in ``Command/reconnect`` (the client asks the
///    next one) or ``Command/close`` then ``Command/reconnect`` (the end);
/// 3. **upstream**: `POST <upstream URL>…` with `X-Sequence-No: n+1, n+2, …`, its body the client's frames as
///    text (each byte a code point, `0` sent as U+0100: ``bytes(fromMixedText:)``), ending in ``Command/reconnect``.
///
/// Frames: `0x80` length bytes (a binary message), `0x81` length bytes (a text message, UTF-8), `0x89 0x00` (ping),
/// `0x8A 0x00` (pong), `0x01` hex-pairs `0xFF` (commands); a length is big-endian groups of 7 bits, the high bit set
/// on all but the last. Upstream and downstream sequence numbers each go up by one from the create's.
package enum KaazingEmulation {
    /// `X-WebSocket-Version`'s value.
    package static let version = "wseb-1.0"
    /// The path segment that starts an emulation suffix: `<service path>/;e/…`.
    package static let marker = ";e"
    /// The create request's last segment, one per encoding of the downstream.
    package static let createSegments: Set<String> = ["cb", "cbm", "ct", "cte", "ctm", "ctem"]
    /// The creates of the binary encoding: `cb`, and `cbm` (KAAZING's Java client): the downstream is
    /// ``binaryDownstreamContentType`` and the upstream bodies are the frames' bytes as they are.
    package static let binaryCreateSegments: Set<String> = ["cb", "cbm"]
    /// The escaped text encodings (`cte`, `ctem`: KAAZING's JavaScript client where the browser's XHR cannot take
    /// every byte): the downstream's bytes ``escaped(_:)``, the upstream's text ``unescaped(_:)``.
    package static let escapedCreateSegments: Set<String> = ["cte", "ctem"]
    /// The upstream and downstream URLs' segments after ``marker``, one pair per encoding, as KAAZING Gateway hands
    /// them back: ``sessionSegments(forCreate:)``.
    package static let upstreamSegments: Set<String> = ["ub", "ubm", "ut", "utm", "ute", "utem"]
    package static let downstreamSegments: Set<String> = ["db", "dbm", "dt", "dtm", "dte", "dtem"]

    /// The upstream and downstream segments of a create's encoding: its first letter `c` made `u` and `d` (`cb` →
    /// `ub`, `db`; `ctem` → `utem`, `dtem`).
    package static func sessionSegments(forCreate segment: String) -> (upstream: String, downstream: String) {
        let encoding = segment.dropFirst()
        return ("u" + encoding, "d" + encoding)
    }

    /// A downstream's bytes in the escaped encodings: NUL, LF, CR and DEL, which a browser's text response may lose,
    /// written `0x7F` then `0`, `n`, `r` or `0x7F` (KAAZING's `ESCAPE_ZERO_AND_NEWLINE`).
    package static func escaped(_ bytes: [UInt8]) -> [UInt8] {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(bytes.count + bytes.count / 16)
        for byte in bytes {
            switch byte {
            case 0x00: escaped += [0x7F, 0x30]
            case 0x0A: escaped += [0x7F, 0x6E]
            case 0x0D: escaped += [0x7F, 0x72]
            case 0x7F: escaped += [0x7F, 0x7F]
            default: escaped.append(byte)
            }
        }
        return escaped
    }

    /// An upstream's bytes in the escaped encodings (after ``bytes(fromMixedText:)``): `0x7F` and the byte after it
    /// are one byte — `0` NUL, `n` LF, `r` CR, any other itself (as KAAZING Gateway tolerates). A body ending in
    /// `0x7F` throws.
    package static func unescaped(_ bytes: [UInt8]) throws(FormatError) -> [UInt8] {
        guard bytes.contains(0x7F) else { return bytes }
        var unescaped: [UInt8] = []
        unescaped.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            guard byte == 0x7F else {
                unescaped.append(byte)
                continue
            }
            guard index < bytes.count else { throw FormatError("an escape without its byte") }
            switch bytes[index] {
            case 0x30: unescaped.append(0x00)
            case 0x6E: unescaped.append(0x0A)
            case 0x72: unescaped.append(0x0D)
            case let other: unescaped.append(other)
            }
            index += 1
        }
        return unescaped
    }
    /// The query of KAAZING's cross-origin bridge page, at `/` of the gateway's origin.
    package static let bridgeQuery = ".kr=xs"
    /// `X-Next-Protocol`'s value (or `.knp`'s) asking for answers in an HTTP envelope: a `401` or `403` inside a
    /// `200` `application/x-message-http`, which a browser shows a script (and never answers with a password dialog).
    package static let envelopeProtocol = "httpxe/1.1"
    package static let envelopeContentType = "application/x-message-http"
    /// The downstream's content type: every byte one character.
    package static let downstreamContentType = "text/plain;charset=windows-1252"
    /// The binary encoding's downstream and upstream content type.
    package static let binaryDownstreamContentType = "application/octet-stream"
    /// The only command a client may say it accepts (`X-Accept-Commands`): `PING` and `PONG` frames.
    package static let acceptedCommand = "ping"
    /// The largest sequence number (2^53 − 1: a JavaScript number).
    package static let maximumSequence: UInt64 = (1 << 53) - 1

    /// A command carried in a command frame.
    package enum Command: UInt8, Sendable {
        /// Padding or a heartbeat.
        case nop = 0
        /// The end of an upstream request's body, or of a downstream response (the client asks the next).
        case reconnect = 1
        /// The WebSocket closes.
        case close = 2
    }

    /// A frame of either direction.
    package enum Frame: Equatable, Sendable {
        case binary([UInt8])
        case text([UInt8])
        case ping
        case pong
        case command(Command)
    }

    /// Why a body is not frames.
    package struct FormatError: Error, Equatable, CustomStringConvertible, Sendable {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// A frame's bytes.
    package static func encode(_ frame: Frame) -> [UInt8] {
        var bytes: [UInt8] = []
        encode(frame, into: &bytes)
        return bytes
    }

    /// Appends a frame's bytes to `bytes`.
    package static func encode(_ frame: Frame, into bytes: inout [UInt8]) {
        switch frame {
        case .binary(let payload):
            bytes.append(0x80)
            appendLength(payload.count, to: &bytes)
            bytes += payload
        case .text(let payload):
            bytes.append(0x81)
            appendLength(payload.count, to: &bytes)
            bytes += payload
        case .ping:
            bytes += [0x89, 0x00]
        case .pong:
            bytes += [0x8A, 0x00]
        case .command(let command):
            bytes += [0x01, 0x30, 0x30 + command.rawValue, 0xFF]
        }
    }

    private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        var groups: [UInt8] = [UInt8(length & 0x7F)]
        var rest = length >> 7
        while rest > 0 {
            groups.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes += groups.reversed()
    }

    /// The frames of an upstream body (its bytes, ``bytes(fromMixedText:)``), each message at most `maximumLength`
    /// bytes. A body cut inside a frame, an unknown frame type or command, or a length over the bound throws.
    package static func frames(in bytes: [UInt8], maximumLength: Int) throws(FormatError) -> [Frame] {
        var frames: [Frame] = []
        var index = 0
        while index < bytes.count {
            guard case let (parsed, next)? = try frame(in: bytes, at: index, maximumLength: maximumLength) else {
                throw FormatError(bytes[index] & 0x80 == 0 ? "a text frame without its end" : "a frame cut short")
            }
            frames += parsed
            index = next
        }
        return frames
    }

    /// The frame at `start` of `bytes` (none for a `NOP` command, several for a command frame naming several) and the
    /// index after it; `nil` when the bytes end inside it.
    static func frame(in bytes: [UInt8], at start: Int, maximumLength: Int) throws(FormatError) -> ([Frame], Int)? {
        var index = start
        let type = bytes[index]
        index += 1
        if type & 0x80 == 0 {
            // Text framing: bytes up to 0xFF. Only command frames (0x01) are sent upstream by KAAZING's clients;
            // a 0x00 text frame is a text message.
            guard let end = bytes[index...].firstIndex(of: 0xFF) else {
                guard bytes.count - index <= maximumLength else { throw FormatError("a message over the gateway's limit") }
                return nil
            }
            let payload = Array(bytes[index..<end])
            guard payload.count <= maximumLength else { throw FormatError("a message over the gateway's limit") }
            switch type {
            case 0x00:
                return ([.text(payload)], end + 1)
            case 0x01:
                var frames: [Frame] = []
                for byte in payload where byte != 0x30 {
                    guard let command = Command(rawValue: byte &- 0x30), command != .nop else {
                        throw FormatError("an unknown command \(byte)")
                    }
                    frames.append(.command(command))
                }
                return (frames, end + 1)
            default:
                throw FormatError("an unknown frame type \(type)")
            }
        }
        var length = 0
        var complete = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            length = (length << 7) | Int(byte & 0x7F)
            guard length <= maximumLength else { throw FormatError("a message over the gateway's limit") }
            if byte & 0x80 == 0 {
                complete = true
                break
            }
        }
        guard complete, bytes.count - index >= length else { return nil }
        let payload = Array(bytes[index..<(index + length)])
        index += length
        switch type {
        case 0x80: return ([.binary(payload)], index)
        case 0x81: return ([.text(payload)], index)
        // `PING` and `PONG` carry nothing (`0x89 0x00`, `0x8A 0x00`).
        case 0x89 where payload.isEmpty: return ([.ping], index)
        case 0x8A where payload.isEmpty: return ([.pong], index)
        case 0x89, 0x8A: throw FormatError("a PING or PONG with a payload")
        default: throw FormatError("an unknown frame type \(type)")
        }
    }

    /// The bytes of an upstream body sent as text (`text/plain; charset=utf-8`): each code point is a byte, modulo
    /// 256 (KAAZING's clients send `0` as U+0100). Malformed UTF-8 throws.
    package static func bytes(fromMixedText body: [UInt8]) throws(FormatError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(body.count)
        var decoder = UTF8()
        var iterator = body.makeIterator()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): bytes.append(UInt8(truncatingIfNeeded: scalar.value))
            case .emptyInput: break loop
            case .error: throw FormatError("the body is not UTF-8")
            }
        }
        return bytes
    }

    /// A create answer's body: the upstream URL, then the downstream URL, each followed by a line feed.
    package static func createdBody(upstream: String, downstream: String) -> String {
        upstream + "\n" + downstream + "\n"
    }

    /// A sequence number as sent (`X-Sequence-No`, `.ksn`): decimal digits, at most ``maximumSequence``.
    package static func sequenceNumber(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.count <= 16, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let value = UInt64(text), value <= maximumSequence else { return nil }
        return value
    }

    /// The value of query parameter `name` in `query` (`a=1&b=2`), as sent.
    package static func parameter(_ name: String, in query: Substring) -> Substring? {
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts[0] == name { return parts.count > 1 ? parts[1] : "" }
        }
        return nil
    }

    /// An answer in KAAZING's HTTP envelope: the inner response's status line, fields and body, as bytes of the
    /// outer `200`'s body.
    package static func envelope(status: Int, reason: String, fields: [(name: String, value: String)], body: [UInt8]) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(reason)\r\n"
        for field in fields { text += field.name + ": " + field.value + "\r\n" }
        text += "Content-Length: \(body.count)\r\n\r\n"
        return Array(text.utf8) + body
    }
}
