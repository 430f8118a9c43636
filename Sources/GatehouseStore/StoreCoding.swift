import Foundation
import GatehouseProtocol
import Synchronization

/// The JSON text both stores keep records as: one configuration for SQLite and PostgreSQL, so that a record
/// written by one reads back in the other.
///
/// `@unchecked Sendable`: the encoder and decoder are configured once, here, and never mutated after; encoding
/// and decoding with them from several threads at once is safe.
public final class StoreCoding: @unchecked Sendable {
    /// The one instance the stores use.
    public static let shared = StoreCoding()

    private let encoder = JSONEncoder()

    private init() {}

    /// `value` as JSON text; the records a flow writes are written by hand (``JSONTextEncodable``), the same JSON
    /// but for key order and unescaped slashes.
    public func encode(_ value: some Encodable) throws -> String {
        if let value = value as? any JSONTextEncodable { return String(decoding: value.jsonText, as: UTF8.self) }
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A record read back from its JSON text: by hand (``JSONValueDecodable``) for the records a flow reads back,
    /// by `JSONDecoder` for the rest (and for anything the hand reading does not take, with `JSONDecoder`'s errors).
    public func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        var text = text
        return try text.withUTF8 { try SharedJSONCoders.decode(type, from: UnsafeRawBufferPointer($0)) }
    }
}

/// Registrations decoded from their stored text, by client id: a round reads its client's registration every
/// time, and decoding the JSON cost more than reading it. A hit needs the stored text to be the very text that
/// was decoded (compared whole), so a registration changed by any node is decoded again; nothing is ever served
/// without reading the store.
public final class DecodedRegistrations: Sendable {
    private struct Entry {
        let text: String
        let record: ClientRegistrationRecord
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// Entries kept at most; when full, the cache starts again empty (simple, and bounded).
    let capacity: Int

    public init(capacity: Int = 16_384) { self.capacity = capacity }

    /// Remembers that `text` is `record` (just encoded from it, on creation): its first read decodes nothing.
    public func remember(_ record: ClientRegistrationRecord, as text: String) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[record.clientID] = Entry(text: text, record: record)
        }
    }

    /// The registration stored as `text`, decoded once per distinct text.
    public func record(_ text: String, clientID: String) throws -> ClientRegistrationRecord {
        if let entry = entries.withLock({ $0[clientID] }), entry.text == text { return entry.record }
        let record = try StoreCoding.shared.decode(ClientRegistrationRecord.self, text)
        remember(record, as: text)
        return record
    }
}
