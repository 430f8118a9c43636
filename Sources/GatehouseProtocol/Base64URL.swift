import Foundation

/// Base64url without padding (RFC 7515 §2), the encoding of every JWS part.
public enum Base64URL {
    /// Encodes bytes as unpadded base64url.
    public static func encode(_ bytes: some DataProtocol) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url or standard base64 (the MobileFirst web SDK writes JWS parts with `btoa`), with or
    /// without padding; `nil` when the text is neither.
    public static func decode(_ text: some StringProtocol) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !s.contains("=") || s.hasSuffix("=") else { return nil }
        s = s.replacingOccurrences(of: "=", with: "")
        switch s.count % 4 {
        case 2: s += "=="
        case 3: s += "="
        case 1: return nil
        default: break
        }
        return Data(base64Encoded: s)
    }
}
