import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GatehouseClient
import Testing

/// `URLRequestAuthorizer` (issue 36): a plain `URLSession` — networking code the SDK did not write — reads the PIN-
/// protected balance through the authorizer's `authorize` and `shouldRetry`, learning the scope from the resource's
/// 401 and 403 as `WLResourceRequest` does; a resource's own answer is not retried, and retries are bounded.
@Suite(.timeLimit(.minutes(3))) struct SDKURLRequestAuthorizerTests {
    @Test func aPlainURLSessionReadsAProtectedResource() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let pins = Calls<JSONObject>()
            try client.registerChallengeHandler(SDK.pinHandler(pins))
            let authorizer = URLRequestAuthorizer(client: client)
            let balance = URL(string: server.baseURL + "/mfp/api/" + SDK.balancePath)!
            var statuses: [Int] = []
            var body = Data()
            for attempt in 0..<6 {
                let request = try await authorizer.authorize(URLRequest(url: balance))
                let (data, response) = try await URLSession.shared.data(for: request)
                let http = try #require(response as? HTTPURLResponse)
                statuses.append(http.statusCode)
                body = data
                guard try await authorizer.shouldRetry(request, response: http, attempt: attempt) else { break }
            }
            // No token: 401; a RegisteredClient token: 403 naming accessRestricted; its token (the PIN asked): 200.
            #expect(statuses == [401, 403, 200], "\(statuses)")
            #expect(String(decoding: body, as: UTF8.self).contains("19938.80") && pins.count == 1)
            // The next request knows the scope at once.
            let known = try await authorizer.authorize(URLRequest(url: balance))
            let (_, response) = try await URLSession.shared.data(for: known)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)

            // A resource's own answer is final; retries are bounded.
            let missing = URLRequest(url: URL(string: server.baseURL + "/mfp/api/adapters/ResourceAdapter/none")!)
            let (_, notFound) = try await URLSession.shared.data(for: missing)
            #expect(try await !authorizer.shouldRetry(missing, response: try #require(notFound as? HTTPURLResponse), attempt: 0))
            let refused = try #require(HTTPURLResponse(url: balance, statusCode: 401, httpVersion: nil, headerFields: ["WWW-Authenticate": "Bearer error=\"invalid_token\""]))
            #expect(try await !authorizer.shouldRetry(URLRequest(url: balance), response: refused, attempt: ResourceRequest.maxAuthorizationRetries))
        }
    }
}
