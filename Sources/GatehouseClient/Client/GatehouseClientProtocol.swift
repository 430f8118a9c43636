import Foundation
import GatehouseProtocol

/// What app code needs of a client — tokens, login, logout, protected resources — as a protocol: view models and
/// services take `any GatehouseClientProtocol`, the app gives them its ``GatehouseClient``, and their tests give them a
/// ``GatehouseClientDouble`` instead of a server.
public protocol GatehouseClientProtocol: Sendable {
    /// An access token for `scope` (``GatehouseClient/obtainAccessToken(forScope:)``).
    func obtainAccessToken(forScope scope: String?) async throws(GatehouseClientError) -> AccessToken
    /// Logs in to `securityCheck` pre-emptively (``GatehouseClient/login(securityCheck:credentials:)``).
    func login(securityCheck: String, credentials: JSONObject) async throws(GatehouseClientError) -> JSONObject
    /// Logs out of `securityCheck` (``GatehouseClient/logout(securityCheck:)``).
    func logout(securityCheck: String) async throws(GatehouseClientError)
    /// Sends a request to a protected resource under the runtime's API (`adapters/ResourceAdapter/balance`),
    /// answering its 401 and 403 (``ResourceRequest/send()``).
    func sendResource(path: String, method: ResourceRequest.Method, body: RequestBody, scope: String?) async throws(GatehouseClientError) -> ResourceResponse
}

extension GatehouseClient: GatehouseClientProtocol {
    public func sendResource(path: String, method: ResourceRequest.Method = .get, body: RequestBody = .none,
                             scope: String? = nil) async throws(GatehouseClientError) -> ResourceResponse {
        var request = resourceRequest(path: path, method: method, scope: scope)
        request.body = body
        return try await request.send()
    }
}

/// A ``GatehouseClientProtocol`` for tests: canned answers instead of a server, every call recorded.
///
/// ```swift
/// let client = GatehouseClientDouble()
/// client.resources["GET adapters/ResourceAdapter/balance"] = .success(ResourceResponse(status: 200, headers: [:], body: Data("19938.80".utf8)))
/// client.tokens["accessRestricted"] = .failure(.challengeCancelled(securityCheck: "PinCodeAttempts"))
/// let model = BalanceModel(client: client)
/// await model.refresh()
/// #expect(client.calls == ["GET adapters/ResourceAdapter/balance"])
/// ```
public final class GatehouseClientDouble: GatehouseClientProtocol, Sendable {
    private struct State {
        var tokens: [String: Result<AccessToken, GatehouseClientError>] = [:]
        var logins: [String: Result<JSONObject, GatehouseClientError>] = [:]
        var resources: [String: Result<ResourceResponse, GatehouseClientError>] = [:]
        var calls: [String] = []
    }
    private let state = Locked(State())

    public init() {}

    /// Tokens by scope as given (`nil` scope: `RegisteredClient`); a scope without one gets a token that lasts an hour.
    public var tokens: [String: Result<AccessToken, GatehouseClientError>] {
        get { state.withLock { $0.tokens } }
        set { state.withLock { $0.tokens = newValue } }
    }
    /// Login outcomes by security check; a check without one succeeds with `{}`.
    public var logins: [String: Result<JSONObject, GatehouseClientError>] {
        get { state.withLock { $0.logins } }
        set { state.withLock { $0.logins = newValue } }
    }
    /// Resource answers by `"METHOD path"`; a request without one is answered 404.
    public var resources: [String: Result<ResourceResponse, GatehouseClientError>] {
        get { state.withLock { $0.resources } }
        set { state.withLock { $0.resources = newValue } }
    }
    /// Every call, in order: `token <scope>`, `login <check>`, `logout <check>`, `<METHOD> <path>`.
    public var calls: [String] { state.withLock { $0.calls } }

    public func obtainAccessToken(forScope scope: String?) async throws(GatehouseClientError) -> AccessToken {
        let key = scope ?? Scope.registeredClient
        let canned = state.withLock { state in
            state.calls.append("token \(key)")
            return state.tokens[key]
        }
        return try (canned ?? .success(AccessToken(value: "double-\(UUID().uuidString)", scope: key, expiresAt: Date().addingTimeInterval(3600)))).get()
    }

    public func login(securityCheck: String, credentials: JSONObject) async throws(GatehouseClientError) -> JSONObject {
        let canned = state.withLock { state in
            state.calls.append("login \(securityCheck)")
            return state.logins[securityCheck]
        }
        return try (canned ?? .success([:])).get()
    }

    public func logout(securityCheck: String) async throws(GatehouseClientError) {
        state.withLock { $0.calls.append("logout \(securityCheck)") }
    }

    public func sendResource(path: String, method: ResourceRequest.Method, body: RequestBody, scope: String?) async throws(GatehouseClientError) -> ResourceResponse {
        let key = "\(method.rawValue) \(path)"
        let canned = state.withLock { state in
            state.calls.append(key)
            return state.resources[key]
        }
        return try (canned ?? .success(ResourceResponse(status: 404, headers: [:], body: Data()))).get()
    }
}
