import Foundation

/// A `WWW-Authenticate: Bearer ...` answer of a protected resource (RFC 6750 §3):
/// `Bearer error="insufficient_scope", scope="RegisteredClient accessRestricted"`.
public struct BearerChallenge: Sendable, Equatable {
    /// `invalid_token`, `insufficient_scope`, ... or `nil`.
    public let error: String?
    /// The scope the resource needs, when the resource says.
    public let scope: String?

    /// Parses a `WWW-Authenticate` value; `nil` unless it is a Bearer challenge.
    public init?(_ header: String?) {
        guard let header, let range = header.range(of: "bearer", options: .caseInsensitive) else { return nil }
        let parameters = AuthenticationParameters.parse(String(header[range.upperBound...]))
        error = parameters["error"]
        scope = parameters["scope"]
    }
}
