/// The query parameters and cookies a realm reads credentials from: read with one parser, and removed with the
/// same one before a request is forwarded, so the upstream (and its logs) never see a credential the gateway
/// checked, and nothing the gateway read as a credential is left behind under another spelling.
///
/// A query parameter is matched by its percent-decoded name (`cred%65ntials` is `credentials`); its value is
/// percent-decoded (`+` stays `+`, as base64 needs). Cookies are matched by their exact name.
enum CredentialCarriers {
    /// One `name=value` pair of a query.
    struct QueryParameter: Equatable {
        /// The decoded name.
        var name: String
        /// The decoded value (`""` without `=`).
        var value: String
        /// The pair as sent.
        var raw: Substring
    }

    /// The pairs of a query checked by ``RequestTarget`` (its escapes are well formed).
    static func parameters(of query: String?) -> [QueryParameter] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let equals = pair.firstIndex(of: "=")
            let rawName = equals.map { pair[..<$0] } ?? pair
            let rawValue = equals.map { pair[pair.index(after: $0)...] } ?? ""
            return QueryParameter(name: URIBytes.percentDecoded(rawName) ?? String(rawName),
                                  value: URIBytes.percentDecoded(rawValue) ?? String(rawValue), raw: pair)
        }
    }

    /// `query` without the parameters named `names`; `nil` when nothing is left.
    static func query(_ query: String?, removing names: Set<String>) -> String? {
        guard let query, !query.isEmpty else { return nil }
        guard !names.isEmpty else { return query }
        let kept = parameters(of: query).filter { !names.contains($0.name) }.map(\.raw)
        return kept.isEmpty ? nil : kept.joined(separator: "&")
    }

    /// The `name=value` pairs of `Cookie` fields.
    static func cookies(_ fields: [String]) -> [(name: String, value: String)] {
        fields.flatMap { $0.split(separator: ";") }.compactMap { pair in
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            return (trimmed(pair[..<equals]), trimmed(pair[pair.index(after: equals)...]))
        }
    }

    /// One `Cookie` value holding the pairs of `fields` not named `names` (`nil` when none is left).
    static func cookieField(_ fields: [String], removing names: Set<String>) -> String? {
        let pairs = fields.flatMap { $0.split(separator: ";") }.map { trimmed($0[...]) }.filter { !$0.isEmpty }
        let kept = pairs.filter { pair in
            let name = pair.firstIndex(of: "=").map { trimmed(pair[..<$0]) } ?? pair
            return !names.contains(name)
        }
        return kept.isEmpty ? nil : kept.joined(separator: "; ")
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
