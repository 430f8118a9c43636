import GatehouseProtocol
import Hummingbird

/// `GET /ready` for load balancers: 200 when this node can serve (its store answers, its signing keys are
/// loaded; its policy was valid at start or it would not run), 503 naming what is not. `GET /health` only says
/// the process is alive.
enum Readiness {
    static func check(_ service: AuthorizationService) async -> Response {
        var checks: JSONObject = ["policy": "ok"]
        var ready = true
        do {
            _ = try await service.store.registration(clientID: "gatehouse-readiness-probe")
            checks["store"] = "ok"
        } catch {
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
}
