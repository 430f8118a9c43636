import GatehouseStore
import NIOCore
import PostgresNIO

/// The statements every pre-authorization round runs, prepared once per connection: PostgreSQL parses and plans
/// them once instead of on every call, and each call sends only Bind and Execute.
enum PreparedStatements {
    /// A client's registration and each piece of its state (the registration's row once per state row, or once
    /// with `NULL`s when there is no state).
    struct RegistrationAndState: PostgresPreparedStatement {
        static let name = "gatehouse_registration_and_state"
        static let sql = """
            SELECT r.record, s.name, s.data, s.version FROM registrations r
            LEFT JOIN client_states s ON s.client_id = r.client_id WHERE r.client_id = $1
            """
        typealias Row = (String, String?, ByteBuffer?, Int64?)

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
