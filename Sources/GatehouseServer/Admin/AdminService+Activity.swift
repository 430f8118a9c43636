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
    ///
    /// - Parameters:
    ///   - since: the first bucket's start, ms since the epoch, from 0 to `now` (the routes check it).
    ///   - bucketSec: a bucket's width, 1…``maxBucketSec`` (the routes check it).
    func activity(since: Int64, bucketSec: Int64, now: Int64) async throws -> JSON {
        let width = bucketSec * 1000
        let bucketCount = (now - since) / width + 1
        guard bucketCount <= Self.maxActivityBuckets else {
            throw AdminError.invalidRequest(
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
}
