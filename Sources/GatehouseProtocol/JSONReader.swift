package import Foundation

/// JSON read without Foundation for the bodies every flow sends (a round's request, a registration, the JWS parts
/// of a registration and of a client assertion): `JSONDecoder` cost more than the work these requests ask for.
///
/// It reads only what it reads exactly as `JSONDecoder` would, and answers `nil` for anything else: invalid JSON, a
/// byte-order mark, duplicate keys (`JSONDecoder` keeps the first), numbers with a fraction or an exponent or
/// beyond `Int64`, lone surrogates, more than ``maxDepth`` levels. `nil` sends the caller to `JSONDecoder`, which then
/// decides, with its own error messages (``SharedJSONCoders/decode(_:from:)``). A test compares the two readers
/// on valid, invalid and mutated texts.
package enum JSONReader {
    /// Nesting deeper than this is left to `JSONDecoder`.
    package static let maxDepth = 32

    /// The value of a whole JSON text, or `nil` (see the type's documentation).
    package static func read(_ bytes: UnsafeRawBufferPointer) -> JSON? {
        var reader = Cursor(bytes: bytes)
        reader.skipBlanks()
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipBlanks()
        // (Not `? value : nil`: `JSON` is `ExpressibleByNilLiteral`, and that `nil` would be `.null`.)
        guard reader.index == bytes.count else { return nil }
        return value
    }

    /// ``read(_:)-(UnsafeRawBufferPointer)`` of bytes.
    package static func read(_ bytes: some ContiguousBytes) -> JSON? {
        bytes.withUnsafeBytes { read($0) }
    }

    private struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipBlanks() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func value(depth: Int) -> JSON? {
            guard depth < JSONReader.maxDepth, let byte = current else { return nil }
            switch byte {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string().map(JSON.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer()
            default: return nil
            }
        }

        mutating func literal(_ text: StaticString, _ value: JSON) -> JSON? {
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count else { return nil }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return nil }
            index += count
            return value
        }

        /// An integer literal that fits `Int64`; anything with a fraction or an exponent is left to `JSONDecoder`.
        mutating func integer() -> JSON? {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return nil }
            index += 1
            if first == UInt8(ascii: "0"), let next = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) { return nil }
            while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
            if let byte = current, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return nil }
            guard let number = Int64(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)) else { return nil }
            return .int(number)
        }

        mutating func string() -> String? {
            index += 1   // the opening quote
            let start = index
            // The common case: no escape, so the text is the bytes as they are (validated as UTF-8).
            while let byte = current, byte != UInt8(ascii: "\"") {
                if byte == UInt8(ascii: "\\") { return escapedString(from: start) }
                guard byte >= 0x20 else { return nil }
                index += 1
            }
            guard current != nil else { return nil }
            let text = String(utf8Validating: UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
            index += 1
            return text
        }

        mutating func escapedString(from start: Int) -> String? {
            var utf8 = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(utf8Validating: utf8)
                case UInt8(ascii: "\\"):
                    guard let escape = current else { return nil }
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                    case UInt8(ascii: "b"): utf8.append(0x08)
                    case UInt8(ascii: "f"): utf8.append(0x0C)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let unit = hex4() else { return nil }
                        var scalar: Unicode.Scalar?
                        if (0xD800..<0xDC00).contains(unit) {
                            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else { return nil }
                            index += 2
                            guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                            scalar = Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))
                        } else {
                            scalar = Unicode.Scalar(UInt32(unit))
                        }
                        guard let scalar else { return nil }
                        utf8.append(contentsOf: String(Character(scalar)).utf8)
                    default:
                        return nil
                    }
                default:
                    guard byte >= 0x20 else { return nil }
                    utf8.append(byte)
                }
            }
            return nil
        }

        mutating func hex4() -> UInt16? {
            guard bytes.count - index >= 4 else { return nil }
            var value: UInt16 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt16(digit)
                index += 1
            }
            return value
        }

        mutating func array(depth: Int) -> JSON? {
            index += 1
            var elements: [JSON] = []
            skipBlanks()
            if current == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipBlanks()
                guard let element = value(depth: depth + 1) else { return nil }
                elements.append(element)
                skipBlanks()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return .array(elements)
                default: return nil
                }
            }
        }

        mutating func object(depth: Int) -> JSON? {
            index += 1
            var members: [String: JSON] = [:]
            skipBlanks()
            if current == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipBlanks()
                guard current == UInt8(ascii: "\""), let key = string() else { return nil }
                skipBlanks()
                guard current == UInt8(ascii: ":") else { return nil }
                index += 1
                skipBlanks()
                guard let member = value(depth: depth + 1), members.updateValue(member, forKey: key) == nil else { return nil }
                skipBlanks()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    return .object(members)
                default: return nil
                }
            }
        }
    }
}

/// A type read from a ``JSON`` value by hand, exactly as its `Decodable` conformance reads it, or `nil` for anything
/// that conformance might read differently (then `JSONDecoder` decides). Each conformance sits beside its type's
/// declaration (required members of the right type, optional ones absent, `null` or of the right type, other members
/// ignored); `JSONReaderTests` hold each to its `Decodable` form.
package protocol JSONValueDecodable: Decodable {
    init?(json: JSON)
}

extension SharedJSONCoders {
    /// `type` from JSON bytes: by ``JSONReader`` and ``JSONValueDecodable`` when both can, else by `JSONDecoder` (whose
    /// errors are the ones thrown).
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: some ContiguousBytes) throws -> T {
        if let fast = type as? any JSONValueDecodable.Type, let json = JSONReader.read(bytes), let value = fast.init(json: json) as? T {
            return value
        }
        return try bytes.withUnsafeBytes { try decoder.decode(type, from: Data($0)) }
    }
}

extension JSON {
    /// A member that must be a string (as a non-optional `String` decodes): `nil` otherwise.
    package func requiredString(_ key: String) -> String? {
        if case .string(let text)? = self[key] { return text }
        return nil
    }

    /// A member that may be absent or `null` (`.some(nil)`), or a string; `nil` for anything else.
    package func optionalString(_ key: String) -> String?? {
        switch self[key] {
        case nil, .null?: return .some(nil)
        case .string(let text)?: return .some(text)
        default: return nil
        }
    }

    /// A member that may be absent or `null` (`.some(nil)`), or an integer; `nil` for anything else (an integral
    /// number written with a fraction or exponent included: `JSONReader` leaves those to `JSONDecoder`).
    package func optionalInt(_ key: String) -> Int64?? {
        switch self[key] {
        case nil, .null?: return .some(nil)
        case .int(let number)?: return .some(number)
        default: return nil
        }
    }

    /// A member that may be absent or `null` (`.some(nil)`), or an object; `nil` for anything else.
    package func optionalObject(_ key: String) -> [String: JSON]?? {
        switch self[key] {
        case nil, .null?: return .some(nil)
        case .object(let members)?: return .some(members)
        default: return nil
        }
    }

    /// A member that may be absent or `null` (`.some(nil)`), or a `T` read by hand; `nil` for anything else.
    package func optional<T: JSONValueDecodable>(_ key: String, as type: T.Type) -> T?? {
        switch self[key] {
        case nil, .null?: return .some(nil)
        case let value?: return T(json: value).map { .some($0) }
        }
    }
}
