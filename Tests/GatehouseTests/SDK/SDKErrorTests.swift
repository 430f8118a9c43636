import Foundation
import GatehouseClient
import Testing

/// The SDK's public errors: stable codes, details, causes kept, matching without exhaustive switches.
@Suite(.timeLimit(.minutes(3))) struct SDKErrorTests {
    @Test func errorsMatchByCodeAndKeepTheirCause() {
        let cause = URLError(.notConnectedToInternet)
        let error = GatehouseClientError.transport("GET http://x: offline", underlying: cause)
        #expect(error.code == .transport)
        #expect((error.underlying as? URLError)?.code == .notConnectedToInternet)
        #expect(error == .transport("GET http://x: offline"), "the cause is not compared")
        #expect(error != .transport("another message"))
        #expect(error.description.contains("offline"))
        #expect(error.localizedDescription == error.description, "an alert shows the sentence, not a type name")

        // `switch` over codes, with a default: new codes never break it.
        let label = switch error.code {
        case .cancelled: "cancelled"
        case .transport: "network"
        default: "other"
        }
        #expect(label == "network")
        // Pattern matching on a code, as with the former enum.
        if case .transport = error {} else { Issue.record("the code pattern did not match") }
        if case .cancelled = error { Issue.record("the wrong code matched") }
    }

    @Test func aURLErrorIsSaidInWordsOnce() {
        let refused = NSError(domain: NSURLErrorDomain, code: -1004, userInfo: [NSLocalizedDescriptionKey: "Could not connect to the server."])
        // The transport's message carries the URL error's words: not said again, never as an NSError dump.
        let said = GatehouseClientError.transport("GET http://x/y: Could not connect to the server.", underlying: refused).description
        #expect(said == "Network error: GET http://x/y: Could not connect to the server.")
        let other = GatehouseClientError.transport("GET http://x/y", underlying: refused).description
        #expect(other == "Network error: GET http://x/y (Could not connect to the server.)")
        #expect(!other.contains("Error Domain"))
    }

    @Test func detailsAreReadableWithoutPatterns() {
        let failed = GatehouseClientError.securityCheckFailed(failures: ["PinCodeAttempts": ["failure": "Account blocked"]])
        #expect(failed.code == .securityCheckFailed)
        #expect(failed.failures?["PinCodeAttempts"]?["failure"] == "Account blocked")
        #expect(failed.description == "Security check failure: PinCodeAttempts: Account blocked")
        let server = GatehouseClientError.serverError(status: 400, errorCode: "INVALID_CLIENT_ID", message: "who?")
        #expect(server.isInvalidClientID)
        #expect(server.status == 400 && server.serverErrorCode == "INVALID_CLIENT_ID" && server.message == "who?")
        #expect(GatehouseClientError.challengeTimedOut(securityCheck: "SimpleCaptcha").securityCheck == "SimpleCaptcha")
        #expect(GatehouseClientError.cancelled.code == .cancelled)
        #expect(GatehouseClientError.Code(rawValue: "challengeCancelled") == .challengeCancelled, "codes are stable strings")
    }

    @Test func gatewayErrorsToo() {
        let url = URL(string: "http://gateway.invalid/x")!
        let reason = GatehouseClientError.challengeCancelled(securityCheck: "PinCodeAttempts")
        let error = GatewayClientError.cancelled(location: url, challenge: "Application Token", underlying: reason)
        #expect(error.code == .cancelled)
        #expect(error == .cancelled(location: url, challenge: "Application Token"))
        #expect(error.underlying as? GatehouseClientError == reason)
        #expect(error.description.contains("PinCodeAttempts"))
        #expect(error.localizedDescription == error.description)
        #expect(GatewayClientError.retryLimitReached(location: url, attempts: 2, challenge: "Basic").attempts == 2)
    }
}
