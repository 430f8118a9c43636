import Foundation
import GatehouseClient
import Synchronization
import Testing

/// The SDK asks the runtime API again after a `503` (the server's bound on waiting password checks, a store
/// outage), after its `Retry-After`, a few times: the flow completes against the real server once it answers.
@Suite(.timeLimit(.minutes(3))) struct SDKBusyServerTests {
    @Test func a503IsAskedAgainAfterItsRetryAfter() async throws {
        try await TestServer.run { server in
            let refusals = Mutex(2)
            let transport = RecordingTransport(intercept: { request in
                guard request.url.path.hasSuffix("/registration/v1/self") else { return nil }
                return refusals.withLock { left in
                    guard left > 0 else { return nil }
                    left -= 1
                    return TransportResponse(status: 503, headers: ["Retry-After": "0", "Content-Type": "application/json"],
                                             body: Data(#"{"errorCode":"SERVER_BUSY","errorMsg":"busy"}"#.utf8))
                }
            })
            let client = SDK.client(server, transport: transport)
            _ = try await client.obtainAccessToken(forScope: nil)
            #expect(transport.requests(to: "/registration/v1/self", method: "POST").count == 3)  // two 503s, then registered
        }
    }

    @Test func aServerThatStaysBusyIsAnErrorAfterAFewTries() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport(intercept: { request in
                guard request.url.path.hasSuffix("/registration/v1/self") else { return nil }
                return TransportResponse(status: 503, headers: ["Retry-After": "0"], body: Data(#"{"errorCode":"SERVER_BUSY","errorMsg":"busy"}"#.utf8))
            })
            let client = SDK.client(server, transport: transport)
            await #expect(throws: GatehouseClientError.self) { _ = try await client.obtainAccessToken(forScope: nil) }
            #expect(transport.requests(to: "/registration/v1/self", method: "POST").count == 4)  // the first and three more
        }
    }
}
