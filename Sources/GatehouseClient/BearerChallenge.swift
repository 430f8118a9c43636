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
        let parameters = Self.parameters(String(header[range.upperBound...]))
        error = parameters["error"]
        scope = parameters["scope"]
    }

    /// `name=value` and `name="quoted value"` pairs, separated by commas.
    static func parameters(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var index = text.startIndex
        func skip(_ characters: Set<Character>) {
            while index < text.endIndex, characters.contains(text[index]) { index = text.index(after: index) }
        }
        while index < text.endIndex {
            skip([" ", "\t", ","])
            let nameStart = index
            while index < text.endIndex, text[index] != "=", text[index] != ",", text[index] != " " { index = text.index(after: index) }
            let name = text[nameStart..<index].lowercased()
            skip([" ", "\t"])
            guard index < text.endIndex, text[index] == "=" else { continue }
            index = text.index(after: index)
            skip([" ", "\t"])
            var value = ""
            if index < text.endIndex, text[index] == "\"" {
                index = text.index(after: index)
                while index < text.endIndex, text[index] != "\"" {
                    if text[index] == "\\", text.index(after: index) < text.endIndex { index = text.index(after: index) }
                    value.append(text[index])
                    index = text.index(after: index)
                }
                if index < text.endIndex { index = text.index(after: index) }
            } else {
                while index < text.endIndex, text[index] != "," { value.append(text[index]); index = text.index(after: index) }
                value = value.trimmingCharacters(in: .whitespaces)
            }
            if !name.isEmpty { result[name] = value }
        }
        return result
    }
}
