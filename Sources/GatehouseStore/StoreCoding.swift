import Foundation

/// The JSON text both stores keep records as: one configuration for SQLite and PostgreSQL, so that a record
/// written by one reads back in the other.
///
/// `@unchecked Sendable`: the encoder and decoder are configured once, here, and never mutated after; encoding
/// and decoding with them from several threads at once is safe.
public final class StoreCoding: @unchecked Sendable {
    /// The one instance the stores use.
    public static let shared = StoreCoding()

    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    private init() {}

    /// `value` as JSON text.
    public func encode(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A record read back from its JSON text.
    public func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }
}
