/// Follows a chunked body (RFC 9112 §7.1) through its bytes as they are read, cut anywhere: where each chunk's data
/// lies and where the body ends, after the last chunk and its trailer section — so that a relay can pass the body on
/// as it came and know where the next message starts. Part of the byte-level data path (``HTTPMessageHead``): the
/// gateway follows upstream answers' chunked bodies with it (``UpstreamResponseHandler``).
///
/// As strict as ``HTTPMessageHead``: a chunk size of hex digits only (at most 15), no whitespace around it, chunk
/// extensions as `;name` or `;name=value` (a token, or a quoted string) with no whitespace, every line ended by CRLF,
/// trailer fields of a token name and a colon, no folded lines, bounded extensions and trailers.
struct ChunkedBodyScanner {
    /// Where in a chunk extension (`;name=value`) a byte falls.
    private enum ExtensionPart: Equatable {
        case nameStart, name, valueStart, token, quoted, quotedPair, afterQuoted
    }

    private enum State: Equatable {
        case sizeStart
        case size(value: Int, digits: Int)
        case chunkExtension(value: Int, part: ExtensionPart, length: Int)
        case sizeLF(value: Int)
        case data(remaining: Int)
        case dataCR
        case dataLF
        case trailerLineStart
        case trailerName(length: Int)
        case trailerValue(length: Int)
        case trailerLF
        case finalLF
        case done
    }

    private var state = State.sizeStart
    /// Bytes of trailer fields so far.
    private var trailerBytes = 0

    /// The longest chunk extension accepted, and the most bytes of trailer fields.
    static let maxExtensionLength = 4096
    static let maxTrailerBytes = 16 * 1024

    /// Whether the body's last byte has been read.
    var isComplete: Bool { state == .done }

    /// Reads `bytes` (the body's next bytes), calls `data` with each range of them that is chunk data, and returns
    /// how many of them belong to the body: all of them, or up to its end when it ends among them.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, data: (Range<Int>) -> Void = { _ in }) throws(HTTPHeadError) -> Int {
        var index = 0
        while index < bytes.count, state != .done {
            if case .data(let remaining) = state {
                let count = min(remaining, bytes.count - index)
                data(index..<(index + count))
                index += count
                state = remaining == count ? .dataCR : .data(remaining: remaining - count)
                continue
            }
            try step(bytes[index])
            index += 1
        }
        return index
    }

    private mutating func step(_ byte: UInt8) throws(HTTPHeadError) {
        switch state {
        case .sizeStart:
            guard let digit = Self.hexValue(byte) else { throw HTTPHeadError("an invalid chunk size") }
            state = .size(value: digit, digits: 1)
        case .size(let value, let digits):
            if let digit = Self.hexValue(byte) {
                guard digits < 15 else { throw HTTPHeadError("a chunk size too large") }
                state = .size(value: value << 4 | digit, digits: digits + 1)
            } else if byte == UInt8(ascii: ";") {
                state = .chunkExtension(value: value, part: .nameStart, length: 1)
            } else if byte == 0x0D {
                state = .sizeLF(value: value)
            } else {
                throw HTTPHeadError("an invalid chunk size")
            }
        case .chunkExtension(let value, let part, let length):
            guard length < Self.maxExtensionLength, let next = Self.extensionStep(part, byte) else { throw HTTPHeadError("an invalid chunk extension") }
            switch next {
            case .end: state = .sizeLF(value: value)
            case .part(let part): state = .chunkExtension(value: value, part: part, length: length + 1)
            }
        case .sizeLF(let value):
            guard byte == 0x0A else { throw HTTPHeadError("a CR without LF in a chunked body") }
            state = value == 0 ? .trailerLineStart : .data(remaining: value)
        case .data:
            preconditionFailure("chunk data is taken whole by scan")
        case .dataCR:
            guard byte == 0x0D else { throw HTTPHeadError("chunk data longer than its size") }
            state = .dataLF
        case .dataLF:
            guard byte == 0x0A else { throw HTTPHeadError("a CR without LF in a chunked body") }
            state = .sizeStart
        case .trailerLineStart:
            if byte == 0x0D {
                state = .finalLF
            } else {
                guard HTTPMessageHead.isTokenCharacter(byte) else { throw HTTPHeadError("a malformed trailer field") }
                try countTrailerByte()
                state = .trailerName(length: 1)
            }
        case .trailerName(let length):
            if byte == UInt8(ascii: ":") {
                state = .trailerValue(length: length + 1)
            } else {
                guard HTTPMessageHead.isTokenCharacter(byte) else { throw HTTPHeadError("a malformed trailer field") }
                state = .trailerName(length: length + 1)
            }
            try countTrailerByte()
        case .trailerValue(let length):
            if byte == 0x0D {
                state = .trailerLF
            } else {
                guard HTTPMessageHead.isFieldValueCharacter(byte) else { throw HTTPHeadError("a control character in a trailer field") }
                try countTrailerByte()
                state = .trailerValue(length: length + 1)
            }
        case .trailerLF:
            guard byte == 0x0A else { throw HTTPHeadError("a CR without LF in a chunked body") }
            state = .trailerLineStart
        case .finalLF:
            guard byte == 0x0A else { throw HTTPHeadError("a CR without LF in a chunked body") }
            state = .done
        case .done:
            break
        }
    }

    private enum ExtensionStep { case part(ExtensionPart), end }

    /// Where `byte` takes a chunk extension at `part`; `nil` when it cannot be there.
    private static func extensionStep(_ part: ExtensionPart, _ byte: UInt8) -> ExtensionStep? {
        let token = HTTPMessageHead.isTokenCharacter(byte)
        switch part {
        case .nameStart:
            return token ? .part(.name) : nil
        case .name, .token, .afterQuoted:
            if token, part != .afterQuoted { return .part(part) }
            if byte == UInt8(ascii: "="), part == .name { return .part(.valueStart) }
            if byte == UInt8(ascii: ";") { return .part(.nameStart) }
            return byte == 0x0D ? .end : nil
        case .valueStart:
            if token { return .part(.token) }
            return byte == UInt8(ascii: "\"") ? .part(.quoted) : nil
        case .quoted:
            switch byte {
            case UInt8(ascii: "\""): return .part(.afterQuoted)
            case UInt8(ascii: "\\"): return .part(.quotedPair)
            default: return HTTPMessageHead.isFieldValueCharacter(byte) ? .part(.quoted) : nil
            }
        case .quotedPair:
            return HTTPMessageHead.isFieldValueCharacter(byte) ? .part(.quoted) : nil
        }
    }

    private mutating func countTrailerByte() throws(HTTPHeadError) {
        trailerBytes += 1
        guard trailerBytes <= Self.maxTrailerBytes else { throw HTTPHeadError("trailer fields too large", tooLarge: true) }
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}
