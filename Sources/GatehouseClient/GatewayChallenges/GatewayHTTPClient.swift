public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Runs gateway challenges: the loop of the KAAZING clients (KAAZING client documentation, “Challenge handlers”: the authentication loop) with a retry limit. Shared by
/// HTTP requests and WebSocket handshakes.
public struct GatewayChallengeLoop: Sendable {
    public let challengeHandler: any HTTPChallengeHandler
    /// The most answers sent for one request before giving up (the seed's "give up after 2 tries").
    public let maxAttempts: Int

    public init(challengeHandler: any HTTPChallengeHandler, maxAttempts: Int = 2) {
        self.challengeHandler = challengeHandler
        self.maxAttempts = maxAttempts
    }

    /// Where a loop stands for one request; start a new one per request (the count resets on success).
    public struct State: Sendable {
        public internal(set) var attempts = 0
        var next: (any HTTPChallengeHandler)?
        public init() {}
    }

    /// The `Authorization` value that answers `challenge`, or the error that ends the request.
    public func answer(_ challenge: String, location: URL, state: inout State) async throws(GatewayClientError) -> String {
        guard state.attempts < maxAttempts else {
            throw .retryLimitReached(location: location, attempts: state.attempts, challenge: challenge)
        }
        let request = ChallengeRequest(location: location, challenge: challenge)
        let handler = state.next ?? challengeHandler
        guard handler.canHandle(request) else { throw .unsupportedChallenge(location: location, challenge: challenge) }
        let response: ChallengeResponse?
        do {
            response = try await handler.respond(to: request)
        } catch {
            throw .cancelled(location: location, challenge: challenge, underlying: error)
        }
        guard let response else { throw .cancelled(location: location, challenge: challenge) }
        state.attempts += 1
        state.next = response.nextChallengeHandler
        return response.credentials
    }
}

/// Sends requests through a gateway, answering its `401` challenges through a challenge handler, up to a retry
/// limit.
///
/// On Linux, Foundation's `URLSession` never completes a request answered `401` with `WWW-Authenticate: Basic`
/// (it waits for credentials it cannot get), so a gateway with a `Basic` realm needs another transport there:
/// `AsyncHTTPClientTransport` of the `GatehouseClientNIO` library. `Application Basic`, `Application Token` and
/// `Bearer` challenges work with the default `URLSessionTransport` everywhere.
public struct GatewayHTTPClient: Sendable {
    public let loop: GatewayChallengeLoop
    let transport: any HTTPTransport

    public init(challengeHandler: any HTTPChallengeHandler, maxAttempts: Int = 2, transport: any HTTPTransport = URLSessionTransport()) {
        loop = GatewayChallengeLoop(challengeHandler: challengeHandler, maxAttempts: maxAttempts)
        self.transport = transport
    }

    /// Sends `request`; a `401` with `WWW-Authenticate` is answered and the request sent again. Other answers
    /// (including `403`) are returned.
    /// Throws ``GatewayClientError``.
    public func send(_ request: TransportRequest) async throws(GatewayClientError) -> TransportResponse {
        var state = GatewayChallengeLoop.State()
        var request = request
        while true {
            let response: TransportResponse
            do {
                response = try await transport.send(request)
            } catch {
                throw .transport("\(error)", underlying: error)
            }
            guard response.status == 401, let challenge = response.header("WWW-Authenticate") else { return response }
            let credentials = try await loop.answer(challenge, location: request.url, state: &state)
            request.headers.removeAll { $0.name.caseInsensitiveCompare("Authorization") == .orderedSame }
            request.headers.append(("Authorization", credentials))
        }
    }

    /// Sends a `URLRequest` (method, URL, header fields, body and timeout are taken from it) as ``send(_:)-(TransportRequest)``.
    public func send(_ request: URLRequest) async throws(GatewayClientError) -> (Data, HTTPURLResponse) {
        guard let url = request.url else { throw .transport("the request has no URL") }
        let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        let timeout = request.timeoutInterval > 0 ? Duration.milliseconds(Int64(request.timeoutInterval * 1000)) : .seconds(60)
        let response = try await send(TransportRequest(method: request.httpMethod ?? "GET", url: url, headers: headers,
                                                       body: request.httpBody, timeout: timeout))
        guard let http = HTTPURLResponse(url: url, statusCode: response.status, httpVersion: "HTTP/1.1", headerFields: response.headers) else {
            throw .transport("not an HTTP answer")
        }
        return (response.body, http)
    }
}
