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

/// Why the PostgreSQL store could not start: a stable ``Code`` (codes can be added without breaking a caller's
/// code) and what exactly.
public struct PostgresStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        /// The database URL is not a usable `postgres://` URL.
        public static let invalidURL = Code(description: "invalid PostgreSQL URL")
        /// The database did not answer in time.
        public static let timeout = Code(description: "timed out")
    }

    public let code: Code
    /// The reason (for an invalid URL) or what timed out.
    public let detail: String

    public static func invalidURL(_ reason: String) -> PostgresStoreError { PostgresStoreError(code: .invalidURL, detail: reason) }
    public static func timeout(_ what: String) -> PostgresStoreError { PostgresStoreError(code: .timeout, detail: what) }

    public var description: String { code == .invalidURL ? "invalid PostgreSQL URL: \(detail)" : "timed out \(detail)" }
}
