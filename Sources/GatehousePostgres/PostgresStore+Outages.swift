import _ConnectionPoolModule
public import GatehouseStore
import PostgresNIO

extension PostgresStore {
    /// PostgreSQL's errors that mean "not now": the connection or pool failed (the server restarting, gone, or not
    /// yet up), the server is shutting down or starting (`57P0x`), out of resources (`53xxx`: disk full, out of
    /// memory, too many connections), or a connection exception (`08xxx`). A constraint violation or a malformed
    /// query is not one: it is the request's or a bug.
    public func outage(_ error: any Error) -> StoreUnavailable? { Self.outage(of: error) }

    /// ``outage(_:)`` without a store: also for errors of ``connect(_:logger:)`` (a database not up yet).
    public static func outage(of error: any Error) -> StoreUnavailable? {
        if let error = error as? StoreUnavailable { return error }
        if let error = error as? PostgresStoreError, error.code == .timeout { return StoreUnavailable(.timedOut, error.description) }
        if let error = error as? ConnectionPoolError {
            return StoreUnavailable(.unreachable, error == .connectionCreationCircuitBreakerTripped
                ? "PostgreSQL could not be reached for a while (the pool stopped trying for now)" : "the connection pool: \(error)")
        }
        guard let error = error as? PSQLError else { return nil }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "a server error"
            if state == "53100" { return StoreUnavailable(.full, "PostgreSQL's disk is full (\(state)): \(message)") }
            if state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P") || state == "25006" {
                return StoreUnavailable(state == "25006" ? .busy : .unreachable, "PostgreSQL \(state): \(message)")
            }
            return nil
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
             .messageDecodingFailure, .unexpectedBackendMessage, .sslUnsupported, .failedToAddSSLHandler:
            let underlying = error.underlying.map { ": \($0)" } ?? ""
            return StoreUnavailable(.unreachable, "the connection to PostgreSQL failed (\(error.code))\(underlying)")
        case .queryCancelled:
            return StoreUnavailable(.timedOut, "a PostgreSQL query was cancelled")
        default:
            return nil
        }
    }
}
