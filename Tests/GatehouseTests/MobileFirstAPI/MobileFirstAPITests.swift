import Foundation
import GatehouseMobileFirst
import Testing

/// The MobileFirst iOS API over the SDK (issue 36): the seeds' own challenge handlers (002, 003), registered with
/// `WLClient.sharedInstance()`, answer a real server's PinCodeAttempts through `WLResourceRequest` and
/// `WLAuthorizationManager`, with their hooks on the main thread as MobileFirst calls them.
@Suite(.serialized, .timeLimit(.minutes(3))) struct MobileFirstAPITests {
    static let balance = URL(string: "/adapters/ResourceAdapter/balance")!

    /// `WLResourceRequest.send` as an `async` call.
    @MainActor static func send(_ request: WLResourceRequest) async -> (WLResponse?, (any Error)?) {
        await withCheckedContinuation { continuation in
            request.send { response, error in continuation.resume(returning: (response, error)) }
        }
    }

    @MainActor static func token(_ scope: String?) async -> (AccessToken?, (any Error)?) {
        await withCheckedContinuation { continuation in
            WLAuthorizationManager.sharedInstance().obtainAccessToken(forScope: scope) { token, error in
                continuation.resume(returning: (token, error))
            }
        }
    }

    @Test func seed003sHandlerAnswersThePinAndTheBalanceIsRead() async throws {
        try await TestServer.run { @MainActor server in
            MobileFirstApp.configure(server)
            WLClient.sharedInstance().registerChallengeHandler(PinCodeChallengeHandler(securityCheck: "PinCodeAttempts"))
            let screen = SampleScreen.shared
            screen.reset(pins: ["0000", "1234"])

            let (response, error) = await Self.send(WLResourceRequest(url: Self.balance, method: WLHttpMethodGet))
            #expect(error == nil, "\(String(describing: error))")
            #expect(response?.status == 200 && response?.responseText.contains("19938.80") == true, "\(String(describing: response?.responseText))")
            // The popup as the tutorial's code builds it: NSNull errorMsg first, then the check's message, attempts
            // counting down; on the main thread.
            #expect(screen.popups.map(\.message).first == "This data requires a PIN code.")
            #expect(screen.popups.map(\.remainingAttempts) == [3, 2])
            #expect(screen.popups.count == 2 && screen.popups[1].message != "This data requires a PIN code.")
            #expect(screen.offMainThread == 0 && screen.errors.isEmpty)

            // A token for the scope, and its Authorization field.
            let (token, tokenError) = await Self.token("accessRestricted")
            #expect(tokenError == nil)
            #expect(token?.asAuthorizationRequestHeaderField.hasPrefix("Bearer ey") == true && token?.scopes.contains("accessRestricted") == true)
            #expect(screen.popups.count == 2, "no new challenge: the PIN's success holds")
        }
    }

    @Test func seed003sHandlerShowsTheBlockAsTheCheckSendsIt() async throws {
        try await TestServer.run { @MainActor server in
            MobileFirstApp.configure(server)
            WLClient.sharedInstance().registerChallengeHandler(PinCodeChallengeHandler(securityCheck: "PinCodeAttempts"))
            let screen = SampleScreen.shared
            screen.reset(pins: ["0000", "0001", "0002"])
            let (response, error) = await Self.send(WLResourceRequest(url: Self.balance, method: WLHttpMethodGet))
            #expect(response == nil)
            #expect((error as? WLError)?.code == .authorizationFailure, "\(String(describing: error))")
            #expect(screen.popups.map(\.remainingAttempts) == [3, 2, 1])
            #expect(screen.errors == ["Account blocked"], "handleFailure(failure:) shows the check's failure")
        }
    }

    @Test func seed002sHandlerCancelsWithSubmitFailure() async throws {
        try await TestServer.run { @MainActor server in
            MobileFirstApp.configure(server)
            WLClient.sharedInstance().registerChallengeHandler(Seed002.PinCodeChallengeHandler(securityCheck: "PinCodeAttempts"))
            let screen = SampleScreen.shared
            screen.reset(pins: [])
            let (token, error) = await Self.token("accessRestricted")
            #expect(token == nil)
            #expect((error as? WLError)?.code == .challengeHandlingCanceled, "\(String(describing: error))")
            #expect(error.map { $0 as NSError }?.domain == WLError.domain)
            #expect(screen.popups.count == 1)

            // The same handler answering: a token.
            screen.reset(pins: ["1234"])
            let (answered, again) = await Self.token("accessRestricted")
            #expect(again == nil && answered?.value.isEmpty == false)
        }
    }

    @Test func loginJSONBodiesAndAResourcesOwnFailure() async throws {
        try await TestServer.run(policy: TestPolicies.standard.replacingOccurrences(
            of: "successStateExpirationSec: 1, rememberMeDurationSec", with: "successStateExpirationSec: 60, rememberMeDurationSec")) { @MainActor server in
            MobileFirstApp.configure(server)
            let manager: WLAuthorizationManager = WLAuthorizationManager.sharedInstance()
            let loggedIn: (any Error)? = await withCheckedContinuation { continuation in
                manager.login("UserLogin", withCredentials: ["username": "john", "password": "demo"]) { continuation.resume(returning: $0) }
            }
            #expect(loggedIn == nil, "\(String(describing: loggedIn))")
            let (token, _) = await Self.token("UserLogin")
            #expect(token != nil)
            let wrong: (any Error)? = await withCheckedContinuation { continuation in
                manager.login("UserLogin", withCredentials: ["username": "john", "password": "nope"]) { continuation.resume(returning: $0) }
            }
            #expect(wrong != nil)
            // An absolute URL that answers 404: the response and an error, as MobileFirst reports a resource's failure.
            let missing: WLResourceRequest = WLResourceRequest(url: URL(string: server.baseURL + "/mfp/api/adapters/ResourceAdapter/nothing-here")!, method: WLHttpMethodGet)
            let (response, error) = await Self.send(missing)
            #expect(response?.status == 404 && error != nil, "\(String(describing: response?.status)) \(String(describing: error))")
            let loggedOut: (any Error)? = await withCheckedContinuation { continuation in
                manager.logout("UserLogin") { continuation.resume(returning: $0) }
            }
            #expect(loggedOut == nil)
        }
    }
}
