import Foundation
import GatehouseMobileFirst
import HTTPTypes
import Hummingbird
import Testing

/// The façade as Swift sees MobileFirst's Objective-C API (issue 52): callable from any thread with callbacks on the
/// main thread, `init!` initializers and `sharedInstance()!`, global headers, the response's headers, the device's
/// display name, and analytics and the logger written to swift-log. In `MobileFirstAPITests` (serialized): every test
/// uses the one shared `WLClient`.
extension MobileFirstAPITests {
    /// A handler written the way the Developer Center's apps write theirs: it names its check in `override init()`
    /// and registers itself.
    final class SelfRegisteringHandler: SecurityCheckChallengeHandler {
        var challenges = 0
        override init() {
            super.init(securityCheck: "PinCodeAttempts")
            WLClient.sharedInstance().registerChallengeHandler(self)
        }
        override func handleChallenge(_ challenge: [AnyHashable: Any]!) {
            challenges += 1
            submitChallengeAnswer(["pin": "1234"])
        }
    }

    @Test func registeringAndSendingFromABackgroundQueueCallsBackOnTheMainThread() async throws {
        try await TestServer.run { server in
            await MobileFirstApp.configure(server)
            await SampleScreen.shared.reset(pins: ["0000", "1234"])
            // No isolation at all: a global queue, as a service class of an app would. (On the main queue: Linux's
            // dispatch drains it on a worker thread once the test runner's async main has called dispatch_main.)
            let (onMain, status, text): (Bool, Int32?, String?) = await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    WLClient.sharedInstance()?.registerChallengeHandler(Seed003Underscore.PinCodeChallengeHandler(securityCheck: "PinCodeAttempts"))
                    let request = WLResourceRequest(url: URL(string: "/adapters/ResourceAdapter/balance"), method: WLHttpMethodGet)
                    request?.send { response, _ in
                        continuation.resume(returning: (SampleScreen.onMainQueue, response?.status, response?.responseText))
                    }
                }
            }
            #expect(onMain && status == 200 && text == "19938.80", "\(onMain) \(String(describing: status)) \(String(describing: text))")
            // The `handleChallenge(_:)` label style, on the main thread.
            let (popups, offMain) = await MainActor.run { (SampleScreen.shared.popups.map(\.remainingAttempts), SampleScreen.shared.offMainThread) }
            #expect(popups == [3, 2] && offMain == 0)

            // A detached task asks for a token; the answer comes on the main thread too.
            let (tokenOnMain, token) = await Task.detached {
                await withCheckedContinuation { continuation in
                    WLAuthorizationManager.sharedInstance()?.obtainAccessToken(forScope: "accessRestricted") { token, _ in
                        continuation.resume(returning: (SampleScreen.onMainQueue, token))
                    }
                }
            }.value
            #expect(tokenOnMain && token?.scopes.contains("accessRestricted") == true)
        }
    }

    @Test func aHandlerThatNamesItsCheckInItsOwnInitAnswers() async throws {
        try await TestServer.run { @MainActor server in
            MobileFirstApp.configure(server)
            let handler = SelfRegisteringHandler()
            #expect(WLClient.sharedInstance().getChallengeHandler(forSecurityCheck: "PinCodeAttempts") === handler)
            let (response, error) = await Self.send(WLResourceRequest(url: Self.balance, method: WLHttpMethodGet))
            #expect(error == nil && response?.responseText == "19938.80" && handler.challenges == 1)
        }
    }

    @Test func initializersAreImplicitlyUnwrappedOptionalsAsSwiftSeesMobileFirsts() {
        #expect(WLResourceRequest(url: nil, method: WLHttpMethodGet) == nil)
        #expect(WLResourceRequest(url: URL(string: "/adapters/a/b"), method: nil) == nil)
        let request = WLResourceRequest(url: URL(string: "/adapters/a/b"), method: "post", scope: "accessRestricted")
        #expect(request?.method == "POST" && request?.timeoutInterval == 30 && request?.scope == "accessRestricted")
        request?.setHeaderValue("1", forName: "X-One")
        request?.addHeaderValue("2", forName: "x-one")
        #expect(request?.header(forName: "X-ONE") == "1, 2" && request?.headerNames() as? [String] == ["X-One"])
        request?.removeHeaders(forName: "X-one")
        #expect(request?.headers.isEmpty == true)
        // Never ambiguous: Foundation's NSLog where it fits, the façade's for a dictionary.
        NSLog("Unknown error")
        NSLog("%d attempts", 3)
        NSLog("%@", ["errorMsg": NSNull()] as [AnyHashable: Any])
    }

    @Test func globalHeadersGoWithEveryRequestAndTheResponsesHeadersAreRead() async throws {
        let router = Router()
        router.get("echo") { request, _ -> Response in
            var fields: [String: String] = [:]
            for field in request.headers { fields[field.name.canonicalName] = field.value }
            let body = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
            return Response(status: .ok, headers: [.contentType: "application/json", HTTPField.Name("X-Echo")!: "yes"],
                            body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        let echo = try await RunningApp.start(router: router)
        do {
            try await checkGlobalHeaders(echoPort: echo.port)
        } catch {
            await echo.stop()
            throw error
        }
        await echo.stop()
    }

    private func checkGlobalHeaders(echoPort: Int) async throws {
        try await TestServer.run { @MainActor server in
            MobileFirstApp.configure(server)
            let client: WLClient = WLClient.sharedInstance()
            client.addGlobalHeader("X-App-Flavor", headerValue: "blue")
            client.addGlobalHeader("X-Overridden", headerValue: "global")
            defer {
                client.removeGlobalHeader("X-App-Flavor")
                client.removeGlobalHeader("x-overridden")
            }
            let url = URL(string: "http://127.0.0.1:\(echoPort)/echo")
            let request = WLResourceRequest(url: url, method: WLHttpMethodGet)
            request?.setHeaderValue("own", forName: "x-overridden")
            var (response, error) = await Self.send(request!)
            #expect(error == nil, "\(String(describing: error))")
            #expect(response?.responseJSON?["x-app-flavor"] as? String == "blue")
            #expect(response?.responseJSON?["x-overridden"] as? String == "own", "the request's own header wins")
            #expect(response?.getHeader("X-ECHO") == "yes" && response?.getHeaders("x-echo") as? [String] == ["yes"])
            #expect((response?.getHeaderNames() as? [String])?.contains("x-echo") == true)
            #expect(response?.getResponseHeaders()?["content-type"] as? String == "application/json")

            client.removeGlobalHeader("x-APP-flavor")
            (response, error) = await Self.send(WLResourceRequest(url: url, method: WLHttpMethodGet))
            #expect(response?.responseJSON?["x-app-flavor"] == nil && response?.responseJSON?["x-overridden"] as? String == "global")
        }
    }

    @Test func deviceDisplayNameAndHeartBeatInterval() async throws {
        try await TestServer.run { @MainActor server in
            MobileFirstApp.configure(server)
            let client: WLClient = WLClient.sharedInstance()
            let set: (any Error)? = await withCheckedContinuation { continuation in
                client.setDeviceDisplayName("John's phone") { error in continuation.resume(returning: error) }
            }
            #expect(set == nil, "\(String(describing: set))")
            let (name, error): (String?, (any Error)?) = await withCheckedContinuation { continuation in
                client.getDeviceDisplayName { name, error in continuation.resume(returning: (name, error)) }
            }
            #expect(name == "John's phone" && error == nil)
            let tooLong: (any Error)? = await withCheckedContinuation { continuation in
                client.setDeviceDisplayName(String(repeating: "x", count: 300)) { error in continuation.resume(returning: error) }
            }
            #expect(tooLong != nil)
            client.setHeartBeatInterval(60)
            #expect(client.heartBeatInterval == 60)
            client.setHeartBeatInterval(420)
        }
    }

    @Test func analyticsAndTheLoggerWriteToSwiftLog() {
        let capture = LogCapture()
        MobileFirstLogging.setHandlerFactory { _ in CapturingLogHandler(capture: capture) }
        defer { MobileFirstLogging.setHandlerFactory(nil) }

        let analytics: WLAnalytics = WLAnalytics.sharedInstance()
        analytics.setUserContext("john")
        analytics.log("transfer", withMetadata: ["amount": 10])
        analytics.unsetUserContext()
        analytics.disable()
        analytics.log("not written")
        #expect(!analytics.isEnabled())
        analytics.enable()
        analytics.addDeviceEventListener(LIFECYCLE)
        analytics.send()
        #expect(analytics.deviceEventListeners == [LIFECYCLE])
        analytics.removeDeviceEventListener(LIFECYCLE)

        let logger = OCLogger.getInstanceWithPackage("MyApp")
        logger?.logInfoWithMessages("signed in after %d attempts", 2)
        OCLogger.setLevel(OCLogger_WARN)
        logger?.logInfoWithMessages("below the level")
        logger?.logErrorWithMessages("transfer refused")
        OCLogger.setLevel(OCLogger_DEBUG)
        let other: WLLogger? = WLLogger.getInstanceWithPackage("Other")
        other?.log(withLevel: OCLogger_DEBUG, message: "with fields", userInfo: ["screen": "balance"])

        let lines = capture.text.split(separator: "\n").map(String.init)
        #expect(lines == [
            "info transfer amount=10 userContext=john",
            "info signed in after 2 attempts ",
            "error transfer refused ",
            "debug with fields screen=balance",
        ], "\(lines)")
    }
}
