/// A JSON value: the payload of challenges, answers, successes and failures.
///
/// Security checks and challenge handlers exchange free-form JSON objects (`{"pin":"1234"}`,
/// `{"captcha":"3 + 4","message":null}`). `JSON` keeps integers as integers so that a challenge such as
/// `{"remainingAttempts":2}` reaches the client exactly as the check wrote it.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])
}

/// A JSON object, the shape of every challenge, answer, success and failure.
public typealias JSONObject = [String: JSON]

extension JSON {
    /// The string, if this value is a string.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The integer, if this value is an integral number.
    public var intValue: Int? {
        switch self {
        case .int(let i): return Int(exactly: i)
        case .double(let d): return Int(exactly: d)
        default: return nil
        }
    }
    /// The number as a `Double`, if this value is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
    /// The boolean, if this value is a boolean.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    /// The object, if this value is an object.
    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }
    /// The array, if this value is an array.
    public var arrayValue: [JSON]? { if case .array(let a) = self { return a } else { return nil } }
    /// Whether this value is `null`.
    public var isNull: Bool { self == .null }

    /// The member `key` of an object, or `nil`.
    public subscript(key: String) -> JSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
}

extension JSON: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int64.self) {
            self = .int(i)
        } else if let d = try? container.decode(Double.self) {
            self = .double(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([JSON].self) {
            self = .array(a)
        } else if let o = try? container.decode([String: JSON].self) {
            self = .object(o)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .int(let i): try container.encode(i)
        case .double(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSON {
    /// Wraps an optional string: `nil` becomes `null`.
    public init(_ string: String?) { self = string.map(JSON.string) ?? .null }
    /// Wraps an integer.
    public init(_ int: Int) { self = .int(Int64(int)) }
}
