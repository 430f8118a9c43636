import Foundation
import GatehouseProtocol

/// The retry algorithm of ``ResourceRequest/send()`` (MobileFirst's `WLResourceRequest`).
struct ResourceRequestSender {
    let request: ResourceRequest
    private var client: GatehouseClient { request.client }

    init(request: ResourceRequest) {
        self.request = request
    }

    func send() async throws(GatehouseClientError) -> ResourceResponse {
        let origin = client.registry.nextSequence()
        let manager = client.authorizationManager
        let cacheKey = request.scopeCacheKey
        let scopeCache = client.scopeCache
        /// A token for `scope`; a scope the server cannot serve (an unknown scope element, ...) is forgotten.
        func obtain(_ scope: String?) async throws(GatehouseClientError) -> AccessToken {
            do {
                return try await manager.obtainAccessToken(forScope: scope, origin: origin)
            } catch {
                if error.code == .serverError { scopeCache.remove(cacheKey) }
                throw error
            }
        }
        // Refused before anything else: the user must not be asked to answer a challenge for a request that fails anyway.
        let body = try request.body.encoded()
        if body != nil, request.method == .get || request.method == .head {
            throw .invalidArgument("a \(request.method.rawValue) request cannot have a body")
        }
        var scope = request.scope ?? scopeCache.scope(for: cacheKey)
        var token = try await scope.asyncMap(obtain)
        var retries = 0
        var conflicts = 0
        var gatewayRounds = 0
        while true {
            let response = ResourceResponse(try await client.transport.send(transportRequest(token: token, body: body)))
            if response.status == 409, response.header(ProtocolNames.conflictHeader) != nil {
                conflicts += 1
                guard conflicts <= ResourceRequest.maxConflictRetries else { throw .conflict }
                continue
            }
            if response.status == 401 || response.status == 403, let challenge = BearerChallenge(response.header("WWW-Authenticate")) {
                guard retries < ResourceRequest.maxAuthorizationRetries else {
                    throw .authorizationFailed(
                        "Cannot retrieve a valid authorization header for \(request.url.absoluteString) after \(retries) attempts "
                            + "(last answer: HTTP \(response.status) \(response.header("WWW-Authenticate") ?? "")). "
                            + "Check the resource and authorization server configuration.")
                }
                retries += 1
                if response.status == 401, challenge.asksForStepUp {
                    // A stronger or more recent login (RFC 9470): a token of the scope the resource names.
                    let needed = try await StepUp.prepare(challenge, refused: token, requestScope: scope, manager: manager)
                    scopeCache.set(needed, for: cacheKey)
                    scope = needed
                } else if response.status == 403 {
                    let needed = Scope(challenge.scope ?? scope).normalized
                    scopeCache.set(needed, for: cacheKey)
                    if let token, token.scope == needed { await manager.clearAccessToken(token) }
                    scope = needed
                } else {
                    // The token was refused (invalid_token, expired, revoked by a logout): drop it and obtain the
                    // same scope again; without a token the resource needs at least RegisteredClient.
                    if let token { await manager.clearAccessToken(token) }
                    if scope == nil {
                        scope = Scope.registeredClient
                        scopeCache.set(Scope.registeredClient, for: cacheKey)
                    }
                }
                token = try await obtain(scope)
                continue
            }
            if gatewayRounds < Preauthorizer.maxGatewayRounds, let gateway = client.registry.gateway(for: response) {
                gatewayRounds += 1
                try await Preauthorizer.handle(gateway, response, timeout: client.configuration.challengeTimeout, observer: client.observer)
                continue
            }
            return response
        }
    }

    private func transportRequest(token: AccessToken?, body: (data: Data, contentType: String)?) -> TransportRequest {
        var headers: [(name: String, value: String)] = [("X-Requested-With", "XMLHttpRequest")]
        for (name, value) in client.configuration.globalHeaders.merging(request.headers, uniquingKeysWith: { $1 }).sorted(by: { $0.key < $1.key }) {
            headers.append((name, value))
        }
        if let token { headers.append(("Authorization", token.authorizationHeaderValue)) }
        if let body, !request.headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers.append(("Content-Type", body.contentType))
        }
        let url = FormEncoding.url(request.url, adding: request.queryParameters.map { ($0.name, $0.value) })
        return TransportRequest(method: request.method.rawValue, url: url, headers: headers, body: body?.data, timeout: request.timeout)
    }
}

extension Optional {
    /// `map` with an asynchronous, throwing transform.
    func asyncMap<T, E: Error>(_ transform: (Wrapped) async throws(E) -> T) async throws(E) -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
