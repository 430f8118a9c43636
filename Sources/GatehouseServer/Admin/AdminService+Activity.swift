import GatehouseProtocol
import GatehouseStore

extension AdminService {
    /// The most buckets one activity answer holds (a day by the minute).
    static let maxActivityBuckets: Int64 = 1440
    /// The widest bucket, seconds (a day).
    static let maxBucketSec: Int64 = 86_400

    /// The audit log counted over time, for the console's chart: from `sinceMs` (default an hour ago) to now, in
    /// buckets of `bucketSec` (default 60), each with its count per event kind, plus the totals per kind.
    ///
    /// `{"sinceMs","untilMs","bucketSec","buckets":[{"startMs","counts":{"<event>":n}}],"totals":{"<event>":n}}`;
    /// every bucket is listed, empty ones too, oldest first. 400 for a bucket outside 1…86400 s, a start in the
    /// future or before the epoch, or more than ``maxActivityBuckets`` buckets.
    func activity(query: [String: String], now: Int64 = EpochTime.nowMillis()) async throws -> JSON {
        let bucketSec = try Self.wholeNumber(query, "bucketSec", default: 60, in: 1...Self.maxBucketSec)
        let since = try Self.wholeNumber(query, "sinceMs", default: max(now - 3_600_000, 0), in: 0...now)
        let width = bucketSec * 1000
        let bucketCount = (now - since) / width + 1
        guard bucketCount <= Self.maxActivityBuckets else {
            throw GatehouseError.invalidRequest(
                "sinceMs and bucketSec ask for \(bucketCount) buckets; at most \(Self.maxActivityBuckets): use a later sinceMs or a wider bucketSec.")
        }
        let until = since + bucketCount * width
        var buckets = [JSONObject](repeating: [:], count: Int(bucketCount))
        var totals: JSONObject = [:]
        await service.audit.flushed()
        for entry in try await store.auditActivity(since: since, until: until, bucketMillis: width)
        where (0..<bucketCount).contains(entry.bucket) {
            buckets[Int(entry.bucket)][entry.event] = .int(entry.count)
            totals[entry.event] = .int(Int64(totals[entry.event]?.intValue ?? 0) + entry.count)
        }
        return [
            "sinceMs": .int(since), "untilMs": .int(until), "bucketSec": .int(bucketSec),
            "buckets": .array(buckets.enumerated().map { index, counts in
                ["startMs": .int(since + Int64(index) * width), "counts": .object(counts)]
            }),
            "totals": .object(totals),
        ]
    }

    /// A whole-number query parameter in `range` (`fallback` when absent or empty); 400 otherwise.
    static func wholeNumber(_ query: [String: String], _ name: String, default fallback: Int64, in range: ClosedRange<Int64>) throws -> Int64 {
        guard let text = query[name], !text.isEmpty else { return fallback }
        guard let value = Int64(text), range.contains(value) else {
            throw GatehouseError.invalidRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return value
    }
}
