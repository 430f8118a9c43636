/// JSON written by hand for the few values every token request encodes (the token's claims, the token answer):
/// Foundation's `JSONEncoder` cost more than the ES256 signature. The text is RFC 8259 JSON that any decoder
/// reads back as the type's `Codable` form (a test checks it does); keys in the order written.
public struct JSONText: Sendable {
    /// The UTF-8 bytes written so far.
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Writes `{`, the members `body` writes, then `}`.
    public mutating func object(_ body: (inout JSONText) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// `"name":` then a string; nothing when `value` is `nil` (as `Codable` leaves out an absent optional).
    public mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// `"name":` then an integer.
    public mutating func member(_ name: StaticString, _ value: Int64) {
        key(name)
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    /// `"name":` then an array of strings.
    public mutating func member(_ name: StaticString, _ values: [String]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(value)
        }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// `"name":` then an object.
    public mutating func member(_ name: StaticString, object body: (inout JSONText) -> Void) {
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

    /// A string, with `"`, `\` and the control characters escaped; everything else as its UTF-8 bytes.
    private mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }
}

/// A value that writes its own JSON (``JSONText``) instead of going through `JSONEncoder` on a hot path.
public protocol JSONTextEncodable: Encodable {
    /// The value as JSON that decodes back to it.
    var jsonText: [UInt8] { get }
}

extension AccessTokenClaims: JSONTextEncodable {
    public var jsonText: [UInt8] {
        var text = JSONText(capacity: 384)
        text.object { claims in
            claims.member("iss", iss)
            claims.member("sub", sub)
            claims.member("exp", exp)
            claims.member("iat", iat)
            claims.member("iat_ms", iat_ms)
            claims.member("jti", jti)
            claims.member("scope", scope)
            claims.member("client_id", client_id)
            if let app {
                claims.member("app") { object in
                    object.member("id", app.id)
                    object.member("clientPlatform", app.clientPlatform)
                    object.member("version", app.version)
                }
            }
            claims.member("checks", checks)
            claims.member("user", user)
        }
        return text.bytes
    }
}

extension TokenResponse: JSONTextEncodable {
    public var jsonText: [UInt8] {
        var text = JSONText(capacity: access_token.utf8.count + 96)
        text.object { answer in
            answer.member("access_token", access_token)
            answer.member("expires_in", Int64(expires_in))
            answer.member("scope", scope)
            answer.member("token_type", token_type)
        }
        return text.bytes
    }
}
