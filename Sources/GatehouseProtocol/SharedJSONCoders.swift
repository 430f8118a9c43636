package import Foundation

/// JSON coders made once and shared: a `JSONDecoder()` or `JSONEncoder()` per call costs an allocation and its
/// options on every request. Never reconfigured after creation, so using them from many threads at once is safe.
package enum SharedJSONCoders {
    /// A decoder with Foundation's defaults.
    package static let decoder = JSONDecoder()
    /// An encoder with sorted keys and unescaped slashes: the same bytes for the same value, every time (answers
    /// and stored states compare byte for byte).
    package static let sortedEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
