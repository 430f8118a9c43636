import GatehouseProtocol
import Testing

/// The one eviction rule of the in-memory caches: expired entries go first; then a full cache forgets all or
/// refuses, as it was made to.
@Suite(.timeLimit(.minutes(3))) struct ExpiringEntriesTests {
    typealias Entries = ExpiringEntries<String, Int, Int>

    @Test func anEntryLivesUntilItsExpiry() {
        var entries = Entries(capacity: 4, overflow: .forgetAll)
        entries.insert(1, for: "a", expires: 10, now: 0)
        let before = entries.value(for: "a", now: 9)
        let at = entries.value(for: "a", now: 10)
        #expect(before == 1 && at == nil)
        #expect(entries.count == 0, "an expired entry read is removed")
    }

    @Test(arguments: [Entries.Overflow.forgetAll, .refuse])
    func aFullCacheDropsExpiredEntriesFirst(overflow: Entries.Overflow) {
        var entries = Entries(capacity: 2, overflow: overflow)
        entries.insert(1, for: "old", expires: 5, now: 0)
        entries.insert(2, for: "live", expires: 50, now: 0)
        let kept = entries.insert(3, for: "new", expires: 50, now: 10)
        let live = entries.value(for: "live", now: 10), new = entries.value(for: "new", now: 10)
        #expect(kept && live == 2 && new == 3)
    }

    @Test func aFullCacheOfLiveEntriesForgetsAllOrRefuses() {
        var forgetting = Entries(capacity: 2, overflow: .forgetAll)
        var refusing = Entries(capacity: 2, overflow: .refuse)
        for key in ["a", "b"] {
            forgetting.insert(1, for: key, expires: 50, now: 0)
            refusing.insert(1, for: key, expires: 50, now: 0)
        }
        let forgot = forgetting.insert(2, for: "c", expires: 50, now: 1)
        let oldAfterForgetting = forgetting.value(for: "a", now: 1), newAfterForgetting = forgetting.value(for: "c", now: 1)
        #expect(forgot && oldAfterForgetting == nil && newAfterForgetting == 2)
        let refused = !refusing.insert(2, for: "c", expires: 50, now: 1)
        let oldKept = refusing.value(for: "a", now: 1), newRefused = refusing.value(for: "c", now: 1)
        #expect(refused && oldKept == 1 && newRefused == nil, "fails closed")
        let replaced = refusing.insert(3, for: "a", expires: 60, now: 1)
        #expect(replaced, "replacing a kept key needs no room")
    }
}
