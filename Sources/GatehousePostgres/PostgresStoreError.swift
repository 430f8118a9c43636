import Foundation

/// Runs `body`, failing with ``PostgresStoreError/timeout(_:)`` if it takes longer than `limit`.
func withDeadline<T: Sendable>(_ limit: Duration, what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw PostgresStoreError.timeout(what) }
        return value
    }
}

/// Why the PostgreSQL store could not start.
public enum PostgresStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database URL is not a usable `postgres://` URL.
    case invalidURL(String)
    /// The database did not answer in time.
    case timeout(String)

    public var description: String {
        switch self {
        case .invalidURL(let reason): "invalid PostgreSQL URL: \(reason)"
        case .timeout(let what): "timed out \(what)"
        }
    }
}
