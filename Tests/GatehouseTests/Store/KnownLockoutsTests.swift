import GatehouseChecks
import GatehouseProtocol
import GatehouseStore
import Testing

/// A node's view of the locked accounts: nothing told before it is read or once it is old, the store's locks
/// after a refresh, this node's own news at once.
@Suite(.timeLimit(.minutes(3))) struct KnownLockoutsTests {
    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.allCases) func theViewFollowsTheStore(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            let now: Int64 = 1_000_000
            let known = KnownLockouts(maxAge: 5000)
            #expect(known.isLocked("client:a", now: now) == nil, "never read: the store must be asked")

            let locked = AccountFailureState(failures: 0, windowStart: now, lockedUntil: now + 60_000, lockouts: 1)
            #expect(try await store.saveAccountFailures("client:a", state: locked, expectedVersion: 0))
            let failing = AccountFailureState(failures: 2, windowStart: now, lockedUntil: 0, lockouts: 0)
            #expect(try await store.saveAccountFailures("client:b", state: failing, expectedVersion: 0))
            try await known.refresh(from: store, now: now)
            #expect(known.isLocked("client:a", now: now) == true)
            #expect(known.isLocked("client:b", now: now) == false)
            #expect(known.isLocked("client:a", now: now + 60_000) == nil, "too old to tell")

            // This node's own news, at once; the next refresh keeps only what the store says.
            known.learn("client:b", lockedUntil: now + 1000)
            known.forget("client:a")
            #expect(known.isLocked("client:b", now: now + 10) == true)
            #expect(known.isLocked("client:a", now: now + 10) == false)
            try await known.refresh(from: store, now: now + 20)
            #expect(known.isLocked("client:a", now: now + 20) == true)
            #expect(known.isLocked("client:b", now: now + 20) == false)

            // More locked accounts than the view holds: it tells nothing.
            let small = KnownLockouts(maxAge: 5000, capacity: 1)
            try await small.refresh(from: store, now: now)
            #expect(small.isLocked("client:a", now: now) == nil)
        }
    }

    @Test(.timeLimit(.minutes(3))) func storeLockoutsKeepTheViewCurrent() async throws {
        try await TestStores.with(.sqlite) { store in
            let now = EpochTime.nowMillis()
            let known = KnownLockouts(maxAge: 60_000)
            try await known.refresh(from: store, now: now)
            let lockouts = StoreAccountLockouts(store: store, policy: AccountLockoutPolicy(threshold: 2), known: known)
            #expect(try await !lockouts.isLockedAsKnown("client:c", now: now))
            try await lockouts.recordFailure("client:c", now: now)
            try await lockouts.recordFailure("client:c", now: now)
            #expect(known.isLocked("client:c", now: now) == true, "learnt from the failure that locked it")
            #expect(try await lockouts.isLockedAsKnown("client:c", now: now))
            try await lockouts.recordSuccess("client:c")
            #expect(try await !lockouts.isLockedAsKnown("client:c", now: now))
        }
    }
}
