// The byte-level data path's message head (README, "What is left"): the gateway reads upstream answers with it
// (`UpstreamResponseHandler`). Its contract, tested against NIO's decoder (llhttp) on generated messages: it accepts
// no head NIO's decoder refuses, and it frames every head it accepts as NIO's decoder does. Parsing is in
// HTTPMessageHead+Parsing.swift; the byte classes and name comparisons shared with the relay are below.

/// An HTTP/1.1 message head found in place in the bytes read: where its parts are, not copies of them, and how the
/// body after it is framed (RFC 9112).
///
/// Strict where leniency lets two parsers disagree about where a message ends (request smuggling): lines end with
/// CRLF (no bare LF, no bare CR), no whitespace between a field name and its colon, no folded lines, no control
/// characters in values, a known method, a target in origin form, one `Content-Length` of digits only, `Transfer-Encoding` only as `chunked` alone (in
/// HTTP/1.1), never with `Content-Length`. Anything else is ``HTTPHeadError``.
struct HTTPMessageHead: Equatable {
    /// What the first line says.
    enum StartLine: Equatable {
        /// `method SP target SP HTTP/1.x`: offsets of the method and target in the head.
        case request(method: Range<Int>, target: Range<Int>)
        /// `HTTP/1.x SP status SP reason`.
        case response(status: Int)
    }

    /// How the body after the head ends.
    enum Framing: Equatable {
        /// No body.
        case none
        /// Exactly this many bytes.
        case length(Int)
        /// Chunks, up to the last chunk and its trailer section (``ChunkedBodyScanner``).
        case chunked
        /// Up to the end of the connection (responses only).
        case untilClose
    }

    /// One field: offsets of its name and of its value (without the whitespace around it) in the head.
    struct Field: Equatable {
        var name: Range<Int>
        var value: Range<Int>
    }

    /// The head's length in bytes, its empty last line included: the body starts there.
    var length: Int
    var startLine: StartLine
    /// `0` for HTTP/1.0, `1` for HTTP/1.1.
    var minorVersion: Int
    var fields: [Field]
    var framing: Framing
    /// The `Content-Length` field's value, if the head has one (even where its status or method means no body).
    var contentLength: Int?

    /// Whether the head has a `Content-Length` field.
    var hasContentLength: Bool { contentLength != nil }

    /// The most bytes a head may have (``RequestHeadLimits``' total, with the start line).
    static let defaultMaxLength = RequestHeadLimits.maxTotalSize
    /// The most fields a head may have.
    static let defaultMaxFields = RequestHeadLimits.maxFieldCount
    /// The longest line a head may have.
    static let maxLineLength = RequestHeadLimits.maxFieldSize
}

/// Why a head was refused.
struct HTTPHeadError: Error, Equatable, CustomStringConvertible {
    let description: String
    /// Whether the head was refused for its size (`431` for a request) rather than its form (`400`).
    var tooLarge = false

    init(_ description: String, tooLarge: Bool = false) {
        self.description = description
        self.tooLarge = tooLarge
    }
}

extension HTTPMessageHead {
    /// The methods a request may have (RFC 9110's and `PATCH`): NIO's decoder knows no others of use here, and a
    /// method it does not know it refuses.
    static let knownMethods: [StaticString] = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]

    /// Whether the bytes at `range` are `text`, case included.
    static func name(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, isExactly text: StaticString) -> Bool {
        guard range.count == text.utf8CodeUnitCount else { return false }
        for offset in 0..<range.count where bytes[range.lowerBound + offset] != text.utf8Start[offset] { return false }
        return true
    }

    /// Whether the field name at `range` is `lowercased`, ignoring ASCII case.
    static func name(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, is lowercased: StaticString) -> Bool {
        guard range.count == lowercased.utf8CodeUnitCount else { return false }
        let expected = lowercased.utf8Start
        for offset in 0..<range.count {
            let byte = bytes[range.lowerBound + offset]
            let lower = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            if lower != expected[offset] { return false }
        }
        return true
    }

    /// `tchar` (RFC 9110 §5.6.2).
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// A field value's byte: `VCHAR`, `obs-text`, space or tab.
    static func isFieldValueCharacter(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte != 0x7F || byte == 0x09
    }

    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}

