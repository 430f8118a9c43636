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
    /// Read over bytes: every confidential client's request (client credentials, introspection) starts here.
    public static func parse(_ authorization: String?) -> (clientID: String, secret: String)? {
        guard let authorization else { return nil }
        let bytes = authorization.utf8
        guard bytes.count > 6, bytes.prefix(5).elementsEqual("basic".utf8, by: { $0 | 0x20 == $1 }),
              bytes.dropFirst(5).first == UInt8(ascii: " ")
        else { return nil }
        var credentials = bytes.dropFirst(6)
        while credentials.first == UInt8(ascii: " ") || credentials.first == UInt8(ascii: "\t") { credentials = credentials.dropFirst() }
        while credentials.last == UInt8(ascii: " ") || credentials.last == UInt8(ascii: "\t") { credentials = credentials.dropLast() }
        guard let decoded = Base64URL.decode(Substring(credentials)), let text = String(validating: decoded, as: UTF8.self),
              let colon = text.firstIndex(of: ":")
        else { return nil }
        return (decode(text[..<colon]), decode(text[text.index(after: colon)...]))
    }

    /// `application/x-www-form-urlencoded` of one value (unreserved characters kept).
    static func encode(_ value: String) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    static func decode(_ value: Substring) -> String {
        if !value.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return String(value) }
        let spaced = value.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
