import GatehouseProtocol
import GatehouseStore
import Hummingbird
import Synchronization

/// `GET /ready` for load balancers: 200 when this node can serve — its store answers a read and takes a write (a
/// probe write at most every ``writeProbeInterval``: `"store":"full"` when its disk is full), its signing keys are
/// loaded; its policy was valid at start or it would not run — 503 naming what is not. `GET /health` only says the
/// process is alive.
enum Readiness {
    static let writeProbeInterval = Duration.seconds(5)
    /// How long each probe may take: a load balancer's check usually waits 5 s; a busy machine (the test suite on two
    /// cores) took over 2 s for a read that takes a millisecond alone.
    static let probeDeadline = Duration.seconds(4)
    private static let lastWrite = Mutex<(at: ContinuousClock.Instant, state: String)?>(nil)

    static func check(_ service: AuthorizationService) async -> Response {
        var checks: JSONObject = ["policy": "ok"]
        let store = service.store
        var state: String
        do {
            _ = try await withStoreDeadline(Self.probeDeadline, "the readiness probe's read") {
                try await store.registration(clientID: "gatehouse-readiness-probe")
            }
            state = await writeState(store)
            // A write that fits in pages the database has may pass on a full disk while requests that need new pages
            // (a registration) fail: those failures say it too.
            if state == "ok", StoreOutageLog.shared.answered(.full, within: writeProbeInterval) { state = "full" }
        } catch {
            state = "unreachable"
        }
        checks["store"] = .string(state)
        var ready = state == "ok"
        if service.signer.currentKID.isEmpty {
            checks["signingKeys"] = "none loaded"
            ready = false
        } else {
            checks["signingKeys"] = "ok"
        }
        let body: JSON = ["status": .string(ready ? "ready" : "not ready"), "checks": .object(checks)]
        return JSONBody.response(ready ? .ok : .serviceUnavailable, body)
    }

    /// Whether the store takes a write: a replay-cache entry that expires at once (`ok`, `full`, `unwritable`),
    /// probed at most every ``writeProbeInterval``.
    private static func writeState(_ store: any UsedAssertionStore & RegistrationStore & StoreOutages) async -> String {
        let now = ContinuousClock.now
        if let last = lastWrite.withLock({ $0 }), now - last.at < writeProbeInterval { return last.state }
        let state: String
        do {
            let millis = EpochTime.nowMillis()
            _ = try await withStoreDeadline(Self.probeDeadline, "the readiness probe's write") {
                try await store.consumeAssertion(digest: "gatehouse-readiness-\(millis)-\(UInt32.random(in: 0...UInt32.max))",
                                                 expiresAt: millis + 1000, now: millis)
            }
            state = "ok"
        } catch {
            state = store.outage(error)?.kind == .full ? "full" : "unwritable"
        }
        lastWrite.withLock { $0 = (now, state) }
        return state
    }
}
