/// The CBOR (RFC 8949) that WebAuthn authenticators write — attestation objects and COSE keys: unsigned and negative
/// integers, byte and text strings, arrays, maps, `true`/`false`/`null`; definite lengths only, as CTAP2's canonical
/// form has them. Anything else (floats, tags, indefinite lengths) is refused, and so are documents nested deeper than
/// 16 levels or ending early.
enum CBOR: Equatable, Sendable {
    case unsigned(UInt64)
    case negative(Int64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([(key: CBOR, value: CBOR)])
    case bool(Bool)
    case null

    struct Malformed: Error, Equatable {}

    /// The value at the start of `bytes`, and how many bytes it took.
    static func decode(_ bytes: [UInt8], from start: Int = 0) throws(Malformed) -> (value: CBOR, end: Int) {
        var reader = Reader(bytes: bytes, position: start)
        let value = try reader.value(depth: 0)
        return (value, reader.position)
    }

    /// The one value `bytes` hold, nothing after it.
    static func decodeWhole(_ bytes: [UInt8]) throws(Malformed) -> CBOR {
        let (value, end) = try decode(bytes)
        guard end == bytes.count else { throw Malformed() }
        return value
    }

    /// The member of a map under an integer key (COSE keys) or a text key (attestation objects).
    subscript(key: Int) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key.integer == key }?.value
    }

    subscript(key: String) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .text(key) }?.value
    }

    var integer: Int? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int.max) ? Int(value) : nil
        case .negative(let value): Int(value)
        default: nil
        }
    }

    var byteString: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    var textString: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)): a == b
        case (.negative(let a), .negative(let b)): a == b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.text(let a), .text(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.map(let a), .map(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var position: Int

        mutating func byte() throws(Malformed) -> UInt8 {
            guard position < bytes.count else { throw Malformed() }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func take(_ count: UInt64) throws(Malformed) -> [UInt8] {
            guard count <= UInt64(bytes.count - position) else { throw Malformed() }
            let end = position + Int(count)
            defer { position = end }
            return Array(bytes[position..<end])
        }

        /// The argument of a head: the additional information itself, or the 1, 2, 4 or 8 bytes after it.
        mutating func argument(_ info: UInt8) throws(Malformed) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24: return UInt64(try byte())
            case 25, 26, 27:
                var value: UInt64 = 0
                for _ in 0..<(1 << (info - 24)) { value = value << 8 | UInt64(try byte()) }
                return value
            default: throw Malformed()   // indefinite lengths and reserved values
            }
        }

        mutating func value(depth: Int) throws(Malformed) -> CBOR {
            guard depth < 16 else { throw Malformed() }
            let head = try byte()
            let major = head >> 5, info = head & 0x1f
            switch major {
            case 0: return .unsigned(try argument(info))
            case 1:
                let argument = try argument(info)
                guard argument < UInt64(Int64.max) else { throw Malformed() }
                return .negative(-1 - Int64(argument))
            case 2: return .bytes(try take(try argument(info)))
            case 3:
                guard let text = String(validating: try take(try argument(info)), as: UTF8.self) else { throw Malformed() }
                return .text(text)
            case 4:
                let count = try argument(info)
                guard count <= UInt64(bytes.count - position) else { throw Malformed() }
                var items: [CBOR] = []
                for _ in 0..<count { items.append(try value(depth: depth + 1)) }
                return .array(items)
            case 5:
                let count = try argument(info)
                guard count <= UInt64(bytes.count - position) / 2 else { throw Malformed() }
                var entries: [(key: CBOR, value: CBOR)] = []
                for _ in 0..<count { entries.append((try value(depth: depth + 1), try value(depth: depth + 1))) }
                return .map(entries)
            case 7:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                default: throw Malformed()
                }
            default:
                throw Malformed()   // tags
            }
        }
    }
}
