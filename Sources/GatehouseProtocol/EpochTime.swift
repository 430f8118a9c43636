package import Foundation

/// Epoch milliseconds: the time unit of the MobileFirst protocol (expirations, `iat_ms`) and of Gatehouse's stored
/// records. The one place that reads the wall clock in that unit.
package enum EpochTime {
    /// Now, in epoch milliseconds (rounded down).
    package static func nowMillis() -> Int64 { millis(of: Date()) }

    /// `date` in epoch milliseconds (rounded down).
    package static func millis(of date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
}

extension Duration {
    /// The duration in whole nanoseconds (rounded down), for APIs that count in them (NIO's `TimeAmount`,
    /// swift-metrics timers).
    package var wholeNanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }

    /// The duration in whole milliseconds (rounded down), as epoch times are counted here.
    package var wholeMilliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
