import GatehouseProtocol
import Hummingbird
import Synchronization

/// `GET /ready` for load balancers: 200 when this node can serve (its store answers, its signing keys are
/// loaded; its policy was valid at start or it would not run), 503 naming what is not. `GET /health` only says
/// the process is alive.
enum Readiness {
    static func check(_ service: AuthorizationService) async -> Response {
        var checks: JSONObject = ["policy": "ok"]
        var ready = true
        let store = service.store
        if await answersInTime(.seconds(2), { _ = try await store.registration(clientID: "gatehouse-readiness-probe") }) {
            checks["store"] = "ok"
        } else {
            checks["store"] = "unreachable"
            ready = false
        }
        if service.signer.currentKID.isEmpty {
            checks["signingKeys"] = "none loaded"
            ready = false
        } else {
            checks["signingKeys"] = "ok"
        }
        let body: JSON = ["status": .string(ready ? "ready" : "not ready"), "checks": .object(checks)]
        return JSONBody.response(ready ? .ok : .serviceUnavailable, body)
    }

    /// Whether `probe` succeeds within `limit`. The probe runs in its own task and is left behind when late (a
    /// store whose server vanished may not notice cancellation until its connect timeout), so a load balancer's
    /// check never hangs.
    static func answersInTime(_ limit: Duration, _ probe: @escaping @Sendable () async throws -> Void) async -> Bool {
        let outcome = Once()
        return await withCheckedContinuation { continuation in
            outcome.set(continuation)
            Task {
                let succeeded = (try? await probe()) != nil
                outcome.resume(succeeded)
            }
            Task {
                try? await Task.sleep(for: limit)
                outcome.resume(false)
            }
        }
    }

    /// A continuation resumed once, by whichever comes first.
    private final class Once: Sendable {
        private let continuation = Mutex<CheckedContinuation<Bool, Never>?>(nil)
        func set(_ value: CheckedContinuation<Bool, Never>) { continuation.withLock { $0 = value } }
        func resume(_ value: Bool) { continuation.withLock { $0.take() }?.resume(returning: value) }
    }
}
