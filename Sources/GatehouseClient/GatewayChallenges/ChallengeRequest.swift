public import Foundation

/// A gateway's challenge: the location that answered `401` and its `WWW-Authenticate` value, parsed as the
/// KAAZING clients do (KAAZING `ChallengeRequest`): a leading `Application ` is stripped, so `Application Basic` and `Basic`
/// are both the scheme `Basic`.
public struct ChallengeRequest: Sendable, Equatable {
    /// The URL that was challenged.
    public let location: URL
    /// The scheme without the `Application ` prefix: `Basic`, `Token`, `Bearer`, ...
    public let authenticationScheme: String
    /// The text after the scheme, if any (e.g. `realm="demo"`).
    public let authenticationParameters: String?
    /// Whether the challenge had the `Application ` prefix (no browser dialog).
    public let isApplicationChallenge: Bool

    /// Parses `challenge` (a `WWW-Authenticate` value) for `location`.
    public init(location: URL, challenge: String) {
        self.location = location
        var text = challenge.trimmingCharacters(in: .whitespaces)
        isApplicationChallenge = text.hasPrefix("Application ")
        if isApplicationChallenge { text = String(text.dropFirst("Application ".count)).trimmingCharacters(in: .whitespaces) }
        if let space = text.firstIndex(of: " ") {
            authenticationScheme = String(text[..<space])
            let rest = text[space...].trimmingCharacters(in: .whitespaces)
            authenticationParameters = rest.isEmpty ? nil : rest
        } else {
            authenticationScheme = text
            authenticationParameters = nil
        }
    }

    /// The challenge's parameters (`name=value` or `name="quoted value"`), by lower-cased name.
    public var parameters: [String: String] {
        authenticationParameters.map(AuthenticationParameters.parse) ?? [:]
    }

    /// The `realm` parameter (the gateway realm's description), if any.
    public var realm: String? { parameters["realm"] }
}
