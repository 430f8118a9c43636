import GatehouseStore
import NIOCore
import PostgresNIO

/// The statements every pre-authorization round runs, prepared once per connection: PostgreSQL parses and plans
/// them once instead of on every call, and each call sends only Bind and Execute.
enum PreparedStatements {
    /// A client's registration, each piece of its state and its device's hold (the registration's row once per
    /// state row, or once with `NULL`s when there is no state).
    struct StoredClient: PostgresPreparedStatement {
        static let name = "gatehouse_stored_client"
        static let sql = """
            SELECT r.record, s.name, s.data, s.version, d.record FROM registrations r
            LEFT JOIN client_states s ON s.client_id = r.client_id
            LEFT JOIN device_access d ON d.device_id = r.device_id WHERE r.client_id = $1
            """
        typealias Row = (String, String?, ByteBuffer?, Int64?, String?)

        let clientID: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(clientID)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A round's writes, all or none (schema v5's `gatehouse_commit`; raises `GH409` on a stale version).
    struct Commit: PostgresPreparedStatement {
        static let name = "gatehouse_commit_round"
        static let sql = "SELECT gatehouse_commit($1, $2, $3, $4)"
        typealias Row = Int32

        let clientID: String
        let writes: [StateWrite]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(clientID)
            bindings.append(writes.map(\.name))
            bindings.append(writes.map { ByteBuffer(bytes: $0.data) })
            bindings.append(writes.map(\.expectedVersion))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int32.self) }
    }
}

/// A statement of the flow whose rows are one text each, prepared likewise: its name and SQL come from `Query`,
/// its values are given in order.
struct TextRows<Query: TextRowsQuery>: PostgresPreparedStatement {
    static var name: String { Query.name }
    static var sql: String { Query.sql }
    typealias Row = String

    let bindings: PostgresBindings

    init(_ values: any PostgresEncodable & Sendable...) throws {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { try bindings.append(value) }
        self.bindings = bindings
    }

    func makeBindings() throws -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(String.self) }
}

/// The name and SQL of a ``TextRows`` statement.
protocol TextRowsQuery {
    static var name: String { get }
    static var sql: String { get }
}

/// The other statements of a flow (registration, codes, the audit log), prepared likewise.
extension PreparedStatements {
    /// A new registration (`client_id`, `record`, `application_id`, `device_id`, `device_name` with "" for none); its id back when
    /// inserted, no row when the id is taken.
    enum InsertRegistration: TextRowsQuery {
        static let name = "gatehouse_insert_registration_v7"
        static let sql = """
            INSERT INTO registrations (client_id, record, application_id, device_id, device_name) VALUES ($1, $2, $3, $4, NULLIF($5, ''))
            ON CONFLICT DO NOTHING RETURNING client_id
            """
    }

    /// A registration's record, by `client_id`.
    enum Registration: TextRowsQuery {
        static let name = "gatehouse_registration"
        static let sql = "SELECT record FROM registrations WHERE client_id = $1"
    }

    /// A new authorization code (codes expired before `$1` deleted first; `code_hash`, `record`, `expires_at`); its
    /// hash back when inserted.
    enum InsertCode: TextRowsQuery {
        static let name = "gatehouse_insert_code"
        static let sql = """
            WITH expired AS (DELETE FROM authorization_codes WHERE expires_at < $1)
            INSERT INTO authorization_codes (code_hash, record, expires_at) VALUES ($2, $3, $4)
            ON CONFLICT DO NOTHING RETURNING code_hash
            """
    }

    /// A code's record by its hash, deleted as it is read (at most one caller gets it).
    enum ConsumeCode: TextRowsQuery {
        static let name = "gatehouse_consume_code"
        static let sql = "DELETE FROM authorization_codes WHERE code_hash = $1 RETURNING record"
    }

    /// Audit events, in order, in one statement (all or none).
    struct AppendAudit: PostgresPreparedStatement {
        static let name = "gatehouse_append_audit"
        static let sql = """
            INSERT INTO audit_events (time, record)
            SELECT time, record FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS e(time, record, position) ORDER BY position
            """
        typealias Row = Int64

        let times: [Int64]
        let records: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(times)
            bindings.append(records)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
    }
}
