/// Header-field text as HTTP defines it: optional whitespace is spaces and tabs (RFC 9110 §5.6.3), and schemes,
/// tokens and field names compare case-insensitively in ASCII. Without Foundation's Unicode-aware string
/// functions, which cost more than the rest of a request's admission on Linux.
enum HeaderText {
    /// `text` without leading and trailing spaces and tabs.
    static func trimmed<S: StringProtocol>(_ text: S) -> Substring where S.SubSequence == Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }) else { return text[text.endIndex...] }
        let last = text.lastIndex(where: { !isSpace($0) })!
        return text[first...last]
    }

    /// Whether `a` and `b` are equal, ASCII letters compared without case.
    static func equalsIgnoringCase<A: StringProtocol, B: StringProtocol>(_ a: A, _ b: B) -> Bool {
        a.utf8.elementsEqual(b.utf8) { lower($0) == lower($1) }
    }

    /// Whether `text` starts with `prefix`, ASCII letters compared without case.
    static func hasPrefixIgnoringCase<A: StringProtocol>(_ text: A, _ prefix: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        for expected in prefix.utf8 {
            guard let byte = bytes.next(), lower(byte) == lower(expected) else { return false }
        }
        return true
    }

    /// `text` with ASCII capitals made small (other characters kept).
    static func lowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return text }
        return String(decoding: text.utf8.map(lower), as: UTF8.self)
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
