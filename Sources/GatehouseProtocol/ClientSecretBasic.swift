import Foundation

/// HTTP Basic credentials of a confidential client (RFC 6749 §2.3.1): the id and the secret are each
/// form-urlencoded, joined by `:`, then base64. Written and read here for both sides, so that ids and secrets
/// with `:`, `%`, `+` or non-ASCII characters survive.
public enum ClientSecretBasic {
    /// The `Authorization` value for `clientID` and `secret`.
    public static func authorization(clientID: String, secret: String) -> String {
        "Basic " + Data("\(encode(clientID)):\(encode(secret))".utf8).base64EncodedString()
    }

    /// The id and secret of an `Authorization: Basic ...` value, or `nil`.
    /// Read over bytes: every confidential client's request (client credentials, introspection) starts here. The
    /// credentials are split at the first colon byte (RFC 7617), and each part must be UTF-8.
    public static func parse(_ authorization: String?) -> (clientID: String, secret: String)? {
        guard var authorization else { return nil }
        return authorization.withUTF8 { bytes -> (clientID: String, secret: String)? in
            guard bytes.count > 6, bytes.prefix(5).elementsEqual("basic".utf8, by: { $0 | 0x20 == $1 }), bytes[5] == UInt8(ascii: " ")
            else { return nil }
            func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            var start = 6, end = bytes.count
            while start < end, isBlank(bytes[start]) { start += 1 }
            while end > start, isBlank(bytes[end - 1]) { end -= 1 }
            guard let decoded = Base64URL.decode(utf8: UnsafeBufferPointer(rebasing: bytes[start..<end])) else { return nil }
            return decoded.withUnsafeBytes { raw -> (clientID: String, secret: String)? in
                guard let colon = raw.firstIndex(of: UInt8(ascii: ":")),
                      let id = String(utf8Validating: raw[..<colon]),
                      let secret = String(utf8Validating: raw[(colon + 1)...])
                else { return nil }
                return (decode(id), decode(secret))
            }
        }
    }

    /// `application/x-www-form-urlencoded` of one value (unreserved characters kept).
    static func encode(_ value: String) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    static func decode(_ value: String) -> String {
        if !value.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return value }
        let spaced = value.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
