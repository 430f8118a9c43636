/// Header-field text as HTTP defines it: optional whitespace is spaces and tabs (RFC 9110 §5.6.3), and schemes,
/// tokens and media types compare case-insensitively in ASCII. Over UTF-8 bytes, without Foundation's
/// Unicode-aware string functions, which cost more than the rest of a request's admission on Linux. Shared by the
/// server (`Content-Type`, `Authorization`) and the gateway (credentials, forwarded headers).
package enum HeaderText {
    /// Whether `byte` is optional whitespace (a space or a tab).
    @inlinable package static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// `text` without leading and trailing spaces and tabs.
    @inlinable package static func trimmed<S: StringProtocol>(_ text: S) -> Substring where S.SubSequence == Substring {
        let whole = text[text.startIndex...]
        let bytes = whole.utf8
        guard let first = bytes.firstIndex(where: { !isBlank($0) }) else { return whole[whole.endIndex...] }
        // The last byte that is not a blank ends a whole character (blanks are ASCII), so the slice ends after it.
        let last = bytes.lastIndex(where: { !isBlank($0) })!
        return whole[first..<bytes.index(after: last)]
    }

    /// Whether `a` and `b` are equal, ASCII letters compared without case.
    @inlinable package static func equalsIgnoringCase<A: StringProtocol, B: StringProtocol>(_ a: A, _ b: B) -> Bool {
        a.utf8.elementsEqual(b.utf8) { lower($0) == lower($1) }
    }

    /// Whether `text` starts with `prefix`, ASCII letters compared without case.
    @inlinable package static func hasPrefixIgnoringCase<A: StringProtocol>(_ text: A, _ prefix: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        for expected in prefix.utf8 {
            guard let byte = bytes.next(), lower(byte) == lower(expected) else { return false }
        }
        return true
    }

    /// `text` with ASCII capitals made small (other characters kept).
    @inlinable package static func lowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return text }
        return String(decoding: text.utf8.map(lower), as: UTF8.self)
    }

    /// `byte` made small if it is an ASCII capital.
    @inlinable package static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
