/// JSON written by hand for the values the hot paths answer (the token's claims, the token answer, a round's
/// answer, an introspection): Foundation's `JSONEncoder` cost more than the ES256 signature. The text is the same
/// bytes as ``SharedJSONCoders/sortedEncoder`` writes (a test checks it): members in the order written (callers
/// write them sorted), dictionaries' keys sorted, slashes unescaped.
package struct JSONText: Sendable {
    /// The UTF-8 bytes written so far.
    package private(set) var bytes: [UInt8] = []
    private var needsComma = false

    package init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Writes `{`, the members `body` writes, then `}`.
    package mutating func object(_ body: (inout JSONText) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// `"name":` then a string; nothing when `value` is `nil` (as `Codable` leaves out an absent optional).
    package mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// `"name":` then an integer.
    package mutating func member(_ name: StaticString, _ value: Int64) {
        key(name)
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    /// `"name":` then `true` or `false`.
    package mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        bytes.append(contentsOf: value ? Self.trueText : Self.falseText)
        needsComma = true
    }

    /// `"name":` then an integer; nothing when `value` is `nil`.
    package mutating func member(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        member(name, value)
    }

    /// `"name":` then a value that writes itself (a nested record); nothing when `value` is `nil`.
    package mutating func member(_ name: StaticString, _ value: (some JSONTextWritable)?) {
        guard let value else { return }
        key(name)
        value.write(to: &self)
    }

    /// `"name":` then any JSON value; nothing when `value` is `nil`.
    package mutating func member(_ name: StaticString, json value: JSON?) {
        guard let value else { return }
        key(name)
        write(value)
    }

    /// `"name":` then an object of JSON values, keys sorted; nothing when `members` is `nil`.
    package mutating func member(_ name: StaticString, members: [String: some JSONTextWritable]?) {
        guard let members else { return }
        key(name)
        object(members)
    }

    /// An object of JSON values, keys sorted.
    package mutating func object(_ members: [String: some JSONTextWritable]) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        for (name, value) in members.sorted(by: { $0.key < $1.key }) {
            string(name)
            bytes.append(UInt8(ascii: ":"))
            needsComma = false
            value.write(to: &self)
        }
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Any JSON value (a non-finite number, which JSON cannot hold, as `null`).
    package mutating func write(_ value: JSON) {
        switch value {
        case .null:
            separate()
            bytes.append(contentsOf: Self.nullText)
        case .bool(let flag):
            separate()
            bytes.append(contentsOf: flag ? Self.trueText : Self.falseText)
        case .int(let number):
            separate()
            bytes.append(contentsOf: String(number).utf8)
        case .double(let number):
            separate()
            if number.isFinite {
                // As JSONEncoder writes it: the shortest text that reads back the same, without a trailing ".0".
                var text = number.description
                if text.hasSuffix(".0") { text.removeLast(2) }
                bytes.append(contentsOf: text.utf8)
            } else {
                bytes.append(contentsOf: Self.nullText)
            }
        case .string(let text):
            string(text)
        case .array(let elements):
            separate()
            bytes.append(UInt8(ascii: "["))
            needsComma = false
            for element in elements { write(element) }
            bytes.append(UInt8(ascii: "]"))
            needsComma = true
        case .object(let members):
            object(members)
        }
    }

    /// `"name":` then an array of strings.
    package mutating func member(_ name: StaticString, _ values: [String]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for value in values { string(value) }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// `"name":` then an object.
    package mutating func member(_ name: StaticString, object body: (inout JSONText) -> Void) {
        key(name)
        object(body)
    }

    private mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        needsComma = false
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
    }

    private static let hex = Array("0123456789abcdef".utf8)
    private static let trueText = Array("true".utf8), falseText = Array("false".utf8), nullText = Array("null".utf8)

    /// A string, with `"`, `\` and the control characters escaped as JSONEncoder does; everything else as its
    /// UTF-8 bytes.
    package mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Runs of bytes that need no escape (all of a token, nearly all of anything) are copied whole.
            var run = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
                run = index + 1
                escape(byte)
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
        case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
        default:
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 0xF)]])
        }
    }
}

/// A value ``JSONText`` writes as a member's value.
package protocol JSONTextWritable {
    func write(to text: inout JSONText)
}

extension String: JSONTextWritable {
    package func write(to text: inout JSONText) { text.string(self) }
}

extension JSON: JSONTextEncodable {
    package func write(to text: inout JSONText) { text.write(self) }
}

/// Objects of strings or JSON values (`["clientId": id]`, a round's successes) answer without `JSONEncoder`.
extension Dictionary: JSONTextWritable, JSONTextEncodable where Key == String, Value: JSONTextWritable & Encodable {
    package func write(to text: inout JSONText) { text.object(self) }
}

/// A value that writes its own JSON (``JSONText``) instead of going through `JSONEncoder` on a hot path: the same
/// JSON its `Encodable` conformance gives, as ``jsonText``. Each conformance sits beside its type's declaration;
/// `JSONTextTests` hold each to the bytes `SharedJSONCoders.sortedEncoder` writes.
package protocol JSONTextEncodable: Encodable, JSONTextWritable {}

extension JSONTextEncodable {
    /// The value as JSON that decodes back to it.
    package var jsonText: [UInt8] {
        var text = JSONText(capacity: 512)
        write(to: &text)
        return text.bytes
    }
}
