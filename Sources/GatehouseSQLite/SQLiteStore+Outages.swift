public import GatehouseStore
import GRDB

extension SQLiteStore {
    /// SQLite's errors that mean "not now": the disk is full (`SQLITE_FULL`; reads go on), an I/O error, the
    /// database busy or locked by another writer, read-only, or out of memory. A constraint violation is not one.
    public func outage(_ error: any Error) -> StoreUnavailable? {
        if let error = error as? StoreUnavailable { return error }
        guard let error = error as? DatabaseError else { return nil }
        let message = error.message ?? "\(error.resultCode)"
        switch error.resultCode.primaryResultCode {
        case .SQLITE_FULL:
            return StoreUnavailable(.full, "the disk of the SQLite database is full: \(message)")
        case .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_NOMEM:
            return StoreUnavailable(.unreachable, "SQLite \(error.resultCode): \(message)")
        case .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_READONLY:
            return StoreUnavailable(.busy, "SQLite \(error.resultCode): \(message)")
        default:
            return nil
        }
    }
}
