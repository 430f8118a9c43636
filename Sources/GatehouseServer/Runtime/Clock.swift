import Foundation

/// Epoch milliseconds, the time unit of the MobileFirst protocol.
enum Clock {
    static func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
