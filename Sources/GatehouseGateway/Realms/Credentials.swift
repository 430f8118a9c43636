import Foundation
import GatehouseHTTP
import GatehouseProtocol

/// What a request carries towards a realm: the `Authorization` header split into scheme and value, and the
/// values of the realm's declared headers, query parameters and cookies (KAAZING Gateway's `authentication` element: `http-header`, `http-query-parameter`, `http-cookie`).
public struct Credentials: Sendable, Equatable {
    /// The `Authorization` scheme, e.g. `Basic`, `Token`, `Bearer`.
    public var scheme: String?
    /// The `Authorization` value after the scheme.
    public var value: String?
    /// Values of the realm's declared headers, query parameters and cookies, by their name.
    public var named: [String: String]
    /// The `x5t#S256` of the TLS client certificate of the request's connection, if it presented one (a gateway asking
    /// for them: `tls.clientCertificates`): what a certificate-bound token must name (RFC 8705).
    public var certificateThumbprint: String?
    /// The client's address (the peer's, or the one a trusted proxy names), when the gateway decides on the event loop:
    /// a module answering from memory refuses a locked address as its task would (`SourceThrottle`).
    public var clientAddress: String?

    public init(scheme: String? = nil, value: String? = nil, named: [String: String] = [:], certificateThumbprint: String? = nil) {
        self.scheme = scheme
        self.value = value
        self.named = named
        self.certificateThumbprint = certificateThumbprint
    }

    /// Nothing at all.
    public var isEmpty: Bool { (value?.isEmpty ?? true) && named.isEmpty }

    /// The opaque secret for `baseScheme`: the `Authorization` value when its scheme matches, else the first named value.
    public func secret(baseScheme: String) -> String? {
        if let scheme, HeaderText.equalsIgnoringCase(scheme, baseScheme), let value, !value.isEmpty { return value }
        return named.sorted { $0.key < $1.key }.first?.value
    }

    /// The user name and password of a `Basic` answer.
    public var basic: (username: String, password: String)? {
        guard let encoded = secret(baseScheme: "Basic") else { return nil }
        let stripped = HeaderText.hasPrefixIgnoringCase(encoded, "basic ") ? encoded.dropFirst(6) : encoded[...]
        // Standard base64 with its padding, as Foundation's `Data(base64Encoded:)` reads it (no URL alphabet, no
        // `=` left out), decoded over bytes: this runs for every request of a `Basic` realm.
        var text = String(HeaderText.trimmed(stripped))
        guard text.utf8.count % 4 == 0, !text.utf8.contains(where: { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }),
              let bytes = text.withUTF8({ Base64URL.decode(utf8: $0) }), let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
              let username = String(validating: bytes[..<colon], as: UTF8.self),
              let password = String(validating: bytes[(colon + 1)...], as: UTF8.self) else { return nil }
        return (username, password)
    }

    /// Parses an `Authorization` value: the text up to the first whitespace is the scheme.
    public static func parseAuthorization(_ header: String?) -> (scheme: String?, value: String?) {
        guard let header = header.map({ HeaderText.trimmed($0) }), !header.isEmpty else { return (nil, nil) }
        guard let space = header.utf8.firstIndex(where: HeaderText.isBlank) else { return (String(header), nil) }
        let value = HeaderText.trimmed(header[space...])
        return (String(header[..<space]), value.isEmpty ? nil : String(value))
    }
}
