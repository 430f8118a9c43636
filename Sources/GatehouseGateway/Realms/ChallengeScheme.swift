/// A realm's HTTP challenge scheme, with the wire forms of the KAAZING gateway (KAAZING Gateway documentation, “Configure the HTTP challenge scheme”).
public enum ChallengeScheme: String, Sendable, Codable, CaseIterable {
    /// `WWW-Authenticate: Basic realm="<description>"`, answered with `Authorization: Basic base64(user:password)`.
    case basic = "Basic"
    /// `WWW-Authenticate: Application Basic realm="<description>"` (no browser dialog), answered with `Basic ...`.
    case applicationBasic = "Application Basic"
    /// `WWW-Authenticate: Application Token` (no realm parameter), answered with `Authorization: Token <opaque>`.
    case applicationToken = "Application Token"
    /// `WWW-Authenticate: Bearer realm="<description>"`, answered with `Authorization: Bearer <token>`.
    case bearer = "Bearer"
    /// `WWW-Authenticate: Negotiate` (RFC 4559, no realm parameter), answered with `Authorization: Negotiate
    /// <base64 SPNEGO token>` from the user's Kerberos ticket (browsers do it themselves).
    case negotiate = "Negotiate"
    /// `WWW-Authenticate: Application Negotiate` (no browser dialog, the client library answers), answered with
    /// `Negotiate <base64 SPNEGO token>`.
    case applicationNegotiate = "Application Negotiate"

    /// The scheme the client answers with: `Basic`, `Token`, `Bearer` or `Negotiate` (the `Application ` prefix stripped).
    public var baseScheme: String {
        switch self {
        case .basic, .applicationBasic: "Basic"
        case .applicationToken: "Token"
        case .bearer: "Bearer"
        case .negotiate, .applicationNegotiate: "Negotiate"
        }
    }

    /// The `WWW-Authenticate` value for a realm described as `description`; `extra` is appended space-separated.
    public func challenge(realmDescription description: String, extra: [String] = []) -> String {
        let head: String
        switch self {
        case .applicationToken, .negotiate, .applicationNegotiate:
            head = rawValue
        case .basic, .applicationBasic, .bearer:
            let escaped = description.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            head = "\(rawValue) realm=\"\(escaped)\""
        }
        return ([head] + extra).joined(separator: " ")
    }
}

extension ChallengeScheme {
    /// Decodes a configuration's scheme; one it does not know is refused naming the ones it does.
    public init(from decoder: any Decoder) throws {
        self = try decoder.decodeCase(of: Self.self)
    }
}

extension Decoder {
    /// A string-valued enumeration's case, or an error that names the values it may have (`must be one of Basic,
    /// Bearer, ..., not 'Basik'`) rather than the decoder's "cannot initialize".
    func decodeCase<Value: RawRepresentable<String> & CaseIterable>(of type: Value.Type) throws -> Value {
        let text = try singleValueContainer().decode(String.self)
        guard let value = Value(rawValue: text) else {
            let known = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "must be one of \(known), not '\(text.prefix(80))'"))
        }
        return value
    }
}
