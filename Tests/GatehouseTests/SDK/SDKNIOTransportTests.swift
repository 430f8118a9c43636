import Foundation
import GatehouseClient
import GatehouseClientNIO
import Testing

/// The SDK's SwiftNIO transport passes cancellation on like `URLSessionTransport`.
@Suite(.timeLimit(.minutes(3))) struct SDKNIOTransportTests {
    @Test func aCancelledRequestEndsAtOnceAsCancelled() async throws {
        let (error, took) = try await SDK.cancelledSilentRequest(through: AsyncHTTPClientTransport())
        #expect(error?.code == .cancelled)
        #expect(error?.underlying != nil)
        #expect(took < .seconds(10), "well before the 30 s timeout")
    }

    @Test func aWholeFlowOverNIOCanBeCancelledAtTheChallenge() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server, transport: AsyncHTTPClientTransport())
            let handler = ForgetfulHandler(securityCheck: "PinCodeAttempts")
            try client.registerChallengeHandler(handler)
            let task = Task { await SDK.error { _ = try await client.obtainAccessToken(forScope: "accessRestricted") } }
            try await SDKCallerCancellationTests.waitUntil("the challenge is open") { handler.isChallengeOpen }
            task.cancel()
            #expect(await task.value?.code == .cancelled)
            try await SDKCallerCancellationTests.waitUntil("the handler hears of the abandonment") { handler.abandoned.count == 1 }
            #expect(handler.abandoned.all.first?.code == .cancelled)
        }
    }
}
