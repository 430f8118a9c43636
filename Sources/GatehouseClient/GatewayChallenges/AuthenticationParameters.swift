import Foundation

/// The parameters of a `WWW-Authenticate` challenge (RFC 9110 §11.2): `name=value` and `name="quoted value"`
/// pairs separated by commas, names lower-cased; shared by Bearer answers and gateway challenges.
enum AuthenticationParameters {
    /// `name=value` and `name="quoted value"` pairs, separated by commas.
    static func parse(_ text: String) -> [String: String] {
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
