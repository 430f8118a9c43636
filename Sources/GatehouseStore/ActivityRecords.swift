/// How many audit events of one kind happened in one time bucket: what the console's activity chart draws.
public struct AuditActivityCount: Sendable, Equatable {
    /// The bucket's index: `(time - since) / bucket`, counted from the query's `since`.
    public var bucket: Int64
    /// The event's kind (`check.failure`, `token.issued`, …).
    public var event: String
    /// How many events of that kind the bucket holds.
    public var count: Int64

    public init(bucket: Int64, event: String, count: Int64) {
        self.bucket = bucket
        self.event = event
        self.count = count
    }
}
