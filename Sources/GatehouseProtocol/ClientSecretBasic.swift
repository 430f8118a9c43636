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
    public static func parse(_ authorization: String?) -> (clientID: String, secret: String)? {
        guard let authorization, authorization.prefix(6).lowercased() == "basic ",
            let decoded = Data(base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (decode(text[..<colon]), decode(text[text.index(after: colon)...]))
    }

    /// `application/x-www-form-urlencoded` of one value (unreserved characters kept).
    static func encode(_ value: String) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    static func decode(_ value: Substring) -> String {
        let spaced = value.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
