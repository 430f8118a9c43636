/// The stored rows of a Gatehouse store, table by table, as `gatehouse store copy` moves them between the embedded
/// SQLite store and PostgreSQL: both stores have the same tables and columns (their migrations keep them so), only
/// the column types differ (`INTEGER`/`BIGINT`, `BLOB`/`BYTEA`).

/// One value of a stored row.
public enum StoreValue: Sendable, Hashable {
    case text(String)
    case integer(Int64)
    case blob([UInt8])
    case null
}

/// A table of both stores: its columns in order, the first ``keyCount`` of them its primary key.
public struct StoreTable: Sendable, Hashable {
    /// What a column holds.
    public enum Kind: Sendable, Hashable { case text, integer, blob }

    public struct Column: Sendable, Hashable {
        public let name: String
        public let kind: Kind
        public let nullable: Bool

        init(_ name: String, _ kind: Kind, nullable: Bool = false) {
            self.name = name
            self.kind = kind
            self.nullable = nullable
        }
    }

    public let name: String
    public let columns: [Column]
    /// How many of the first columns make the primary key (rows are read in its order, and paged by it).
    public let keyCount: Int
    /// Whether the key is a number a sequence hands out (PostgreSQL's `BIGSERIAL`): after a copy into PostgreSQL the
    /// sequence is moved past the highest copied value.
    public let serialKey: Bool

    init(_ name: String, _ columns: [Column], keyCount: Int = 1, serialKey: Bool = false) {
        self.name = name
        self.columns = columns
        self.keyCount = keyCount
        self.serialKey = serialKey
    }

    public var keyColumns: ArraySlice<Column> { columns.prefix(keyCount) }

    /// Every table a deployment needs carried to another store, in the order they are copied. Left out: the
    /// authorization codes (single-use, a minute long: a flow in progress during the move is asked to start again).
    public static let copied: [StoreTable] = [
        StoreTable("signing_keys", [Column("kid", .text), Column("record", .text), Column("created_at", .integer)]),
        StoreTable("policies", [Column("version", .integer), Column("record", .text)]),
        StoreTable("users", [Column("username", .text), Column("record", .text)]),
        StoreTable("registrations", [
            Column("client_id", .text), Column("record", .text), Column("application_id", .text, nullable: true),
            Column("device_id", .text, nullable: true), Column("user_id", .text, nullable: true), Column("device_name", .text, nullable: true),
        ]),
        StoreTable("client_states", [Column("client_id", .text), Column("name", .text), Column("data", .blob), Column("version", .integer)],
                   keyCount: 2),
        StoreTable("device_access", [Column("device_id", .text), Column("record", .text)]),
        StoreTable("user_factors", [
            Column("username", .text), Column("factor", .text), Column("data", .text), Column("enrolled_at", .integer), Column("version", .integer),
        ], keyCount: 2),
        StoreTable("account_failures", [
            Column("account", .text), Column("record", .text), Column("locked_until", .integer), Column("version", .integer),
        ]),
        StoreTable("revocations", [Column("id", .integer), Column("record", .text), Column("revoked_at", .integer)], serialKey: true),
        StoreTable("used_assertions", [Column("digest", .text), Column("expires_at", .integer)]),
        StoreTable("audit_events", [Column("id", .integer), Column("time", .integer), Column("record", .text)], serialKey: true),
    ]
}

/// A store whose tables can be read and written row by row: both stores, for ``StoreCopy``.
public protocol StoreRowAccess: Sendable {
    /// Where the rows are, for people (a path, or a URL without its password).
    var rowsLocation: String { get }
    /// At most `limit` rows of `table` whose key is greater than `after` (all from the start when `nil`), in key order.
    func rows(of table: StoreTable, after key: [StoreValue]?, limit: Int) async throws -> [[StoreValue]]
    /// The row of `table` with this key, if any.
    func row(of table: StoreTable, key: [StoreValue]) async throws -> [StoreValue]?
    /// Inserts `rows` in one transaction, leaving any row whose key is there already as it is; how many were new.
    func insert(_ rows: [[StoreValue]], into table: StoreTable) async throws -> Int
    /// How many rows `table` has.
    func count(of table: StoreTable) async throws -> Int
    /// Called once every table is copied in: a store moves its sequences past the copied keys.
    func finishCopy() async throws
}
