import Foundation

/// `application/x-www-form-urlencoded` and query strings.
enum FormEncoding {
    private static let unreserved: CharacterSet = {
        var set = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        set.insert(charactersIn: "-._~")
        return set
    }()

    /// Percent-encodes everything but the unreserved characters (so `%`, `+`, `&` and `=` in values survive).
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// `a=1&b=2`.
    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// `url` with `fields` appended to its query.
    static func url(_ url: URL, adding fields: [(String, String)]) -> URL {
        guard !fields.isEmpty else { return url }
        let separator = url.query == nil ? "?" : "&"
        return URL(string: url.absoluteString + separator + encode(fields)) ?? url
    }

    /// The query items of an URL string (`https://mfpredirecturi?code=...`).
    static func queryItems(of string: String) -> [String: String] {
        guard let components = URLComponents(string: string) else { return [:] }
        var items: [String: String] = [:]
        for item in components.queryItems ?? [] { items[item.name] = item.value ?? "" }
        return items
    }
}
