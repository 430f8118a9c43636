/// A realm's HTTP challenge scheme, with the wire forms of the KAAZING gateway (reference §2.1).
public enum ChallengeScheme: String, Sendable, Codable, CaseIterable {
    /// `WWW-Authenticate: Basic realm="<description>"`, answered with `Authorization: Basic base64(user:password)`.
    case basic = "Basic"
    /// `WWW-Authenticate: Application Basic realm="<description>"` (no browser dialog), answered with `Basic ...`.
    case applicationBasic = "Application Basic"
    /// `WWW-Authenticate: Application Token` (no realm parameter), answered with `Authorization: Token <opaque>`.
    case applicationToken = "Application Token"
    /// `WWW-Authenticate: Bearer realm="<description>"`, answered with `Authorization: Bearer <token>`.
    case bearer = "Bearer"

    /// The scheme the client answers with: `Basic`, `Token` or `Bearer` (the `Application ` prefix stripped).
    public var baseScheme: String {
        switch self {
        case .basic, .applicationBasic: "Basic"
        case .applicationToken: "Token"
        case .bearer: "Bearer"
        }
    }

    /// The `WWW-Authenticate` value for a realm described as `description`; `extra` is appended space-separated.
    public func challenge(realmDescription description: String, extra: [String] = []) -> String {
        let head: String
        switch self {
        case .applicationToken:
            head = "Application Token"
        case .basic, .applicationBasic, .bearer:
            let escaped = description.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            head = "\(rawValue) realm=\"\(escaped)\""
        }
        return ([head] + extra).joined(separator: " ")
    }
}
