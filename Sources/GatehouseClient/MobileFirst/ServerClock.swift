import GatehouseProtocol

/// The server's clock as the client sees it: local time plus the offset learnt from
/// `successes.clockSynchronization.serverTimeStamp`. Client assertions are dated with it, so a device whose
/// clock is wrong still produces assertions the server accepts.
final class ServerClock: Sendable {
    private let offset = Locked<Int64>(0)

    /// Local time, epoch ms.
    static func localMillis() -> Int64 { EpochTime.nowMillis() }

    /// Server time, epoch ms.
    func nowMillis() -> Int64 { Self.localMillis() + offset.withLock { $0 } }

    /// The server-relative offset, ms.
    var offsetMillis: Int64 { offset.withLock { $0 } }

    /// Learns the offset from a server time stamp (epoch ms).
    func synchronize(serverTimeStamp: Int64) {
        let delta = serverTimeStamp - Self.localMillis()
        offset.withLock { $0 = delta }
    }
}
