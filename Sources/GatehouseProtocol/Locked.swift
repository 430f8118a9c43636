import Foundation

/// A value behind a lock, with the shape of Synchronization's `Mutex` (`withLock`), for the code that apps compile:
/// `Mutex` needs iOS 18 and macOS 15, and the SDK's floor is iOS 16 and macOS 13 (scripts/check-availability fails
/// on a `Mutex` in GatehouseProtocol or the client modules).
///
/// A class over Foundation's `NSLock` (there on every platform the SDK supports). As with `Mutex`, the value goes in
/// and comes out through `sending`, so a non-`Sendable` value never escapes the lock.
package final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    /// A lock holding `initialValue`.
    package init(_ initialValue: sending Value) {
        value = initialValue
    }

    /// Runs `body` with the value, holding the lock; what `body` returns or throws is this call's.
    package func withLock<Result, Failure: Error>(_ body: (inout sending Value) throws(Failure) -> sending Result) throws(Failure) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
