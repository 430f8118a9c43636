import Foundation

/// A `WWW-Authenticate: Bearer ...` answer of a protected resource (RFC 6750 §3):
/// `Bearer error="insufficient_scope", scope="RegisteredClient accessRestricted"`.
public struct BearerChallenge: Sendable, Equatable {
    /// `invalid_token`, `insufficient_scope`, ... or `nil`.
    public let error: String?
    /// The scope the resource needs, when the resource says.
    public let scope: String?
    /// The authentication context classes the resource accepts (RFC 9470 `acr_values`), when it says.
    public let acrValues: [String]?
    /// The most seconds since the user's login the resource accepts (RFC 9470 `max_age`), when it says.
    public let maxAge: Int?

    /// Whether the resource wants a stronger or more recent login (RFC 9470 `insufficient_user_authentication`).
    public var asksForStepUp: Bool { error == "insufficient_user_authentication" }

    /// Parses a `WWW-Authenticate` value; `nil` unless it is a Bearer challenge: the scheme token `Bearer` at the
    /// start of the value or of one of its comma-separated challenges, never the word inside a parameter
    /// (`Basic realm="Bearer API"` is not one).
    public init?(_ header: String?) {
        guard let header, let start = Self.bearerScheme(in: header) else { return nil }
        let parameters = AuthenticationParameters.parse(String(header[start...]))
        error = parameters["error"]
        scope = parameters["scope"]
        acrValues = parameters["acr_values"].map { $0.split(separator: " ").map(String.init) }
        maxAge = parameters["max_age"].flatMap { Int($0) }
    }

    /// Where the parameters of a `Bearer` challenge begin: after a `Bearer` scheme token that starts the value or
    /// follows a comma outside quotes, and is followed by a blank or the end.
    static func bearerScheme(in header: String) -> String.Index? {
        var inQuotes = false
        var atChallengeStart = true
        var index = header.startIndex
        while index < header.endIndex {
            let character = header[index]
            if inQuotes {
                if character == "\\" { index = header.index(after: index) } else if character == "\"" { inQuotes = false }
            } else if character == "\"" {
                inQuotes = true
                atChallengeStart = false
            } else if character == "," {
                atChallengeStart = true
            } else if character == " " || character == "\t" {
                // blanks keep the state
            } else if atChallengeStart {
                let rest = header[index...]
                if rest.prefix(6).lowercased() == "bearer" {
                    let after = header.index(index, offsetBy: 6)
                    if after == header.endIndex || header[after] == " " || header[after] == "\t" || header[after] == "," { return after }
                }
                atChallengeStart = false
            }
            if index < header.endIndex { index = header.index(after: index) }
        }
        return nil
    }
}
