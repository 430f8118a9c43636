import Foundation
import GatehouseClient
import GatehouseProtocol
import Testing

/// A gateway that answers with its login page until the client posted the login form.
final class LoginPageGateway: LoginPageChallengeHandler, @unchecked Sendable {
    let challenges = Calls<Int>()
    let shouldCancel: Bool

    init(cancel: Bool = false) {
        shouldCancel = cancel
        super.init(name: "LoginPageGateway")
    }

    override func canHandleResponse(_ response: ResourceResponse) -> Bool {
        response.header("X-Gateway") == "login"
    }

    override func handleChallenge(_ response: ResourceResponse) {
        challenges.record(response.status)
        if shouldCancel {
            cancel()
            return
        }
        Task {
            let login = try? await submitLoginForm(url: URL(string: "/gateway/login")!, parameters: ["user": "john", "password": "p&ss"])
            if login?.status == 200 { submitSuccess() } else { cancel() }
        }
    }
}

/// A login page nobody fills in, written with MobileFirst's name for the class.
final class IgnoredLoginPage: GatewayChallengeHandler, @unchecked Sendable {
    let abandoned = Calls<GatehouseClientError>()
    init() { super.init(name: "IgnoredLoginPage") }
    override func canHandleResponse(_ response: ResourceResponse) -> Bool { response.header("X-Gateway") == "login" }
    override func challengeAbandoned(_ reason: GatehouseClientError) { abandoned.record(reason) }
}

/// Gateway challenges on resource requests, against a scripted transport (no gateway in front of the test
/// server).
@Suite(.timeLimit(.minutes(3))) struct SDKGatewayTests {
    static func gatewayTransport(_ loggedIn: Calls<String>) -> RecordingTransport {
        RecordingTransport(intercept: { request in
            if request.url.path == "/gateway/login" {
                loggedIn.record(String(decoding: request.body ?? Data(), as: UTF8.self))
                return TransportResponse(status: 200, headers: [:], body: Data())
            }
            if loggedIn.count == 0 {
                return TransportResponse(status: 200, headers: ["X-Gateway": "login"], body: Data("<form>login</form>".utf8))
            }
            return TransportResponse(status: 200, headers: [:], body: Data("data".utf8))
        })
    }

    @Test func theGatewayHandlerLogsInAndTheRequestIsSentAgain() async throws {
        let loggedIn = Calls<String>()
        let transport = Self.gatewayTransport(loggedIn)
        let client = GatehouseClient(
            configuration: ClientConfiguration(serverURL: URL(string: "http://gateway.invalid")!, applicationID: SDK.pinApp),
            keyStore: InMemoryKeyStore(), transport: transport)
        let gateway = LoginPageGateway()
        client.registerLoginPageChallengeHandler(gateway)
        let response = try await SDK.bounded(60) { try await client.resourceRequest(path: "adapters/Open/data").send() }
        #expect(response.text == "data")
        #expect(gateway.challenges.count == 1)
        #expect(loggedIn.all == ["password=p%26ss&user=john"])
        #expect(transport.requests.map(\.url.absoluteString) == [
            "http://gateway.invalid/mfp/api/adapters/Open/data", "http://gateway.invalid/gateway/login", "http://gateway.invalid/mfp/api/adapters/Open/data",
        ])
    }

    @Test func aCancelledGatewayChallengeFailsTheRequest() async throws {
        let client = GatehouseClient(
            configuration: ClientConfiguration(serverURL: URL(string: "http://gateway.invalid")!, applicationID: SDK.pinApp),
            keyStore: InMemoryKeyStore(), transport: Self.gatewayTransport(Calls()))
        client.registerLoginPageChallengeHandler(LoginPageGateway(cancel: true))
        let error = try await SDK.bounded(60) { await SDK.error { _ = try await client.resourceRequest(path: "adapters/Open/data").send() } }
        #expect(error == .challengeCancelled(securityCheck: "LoginPageGateway"))
    }

    @Test func anUnansweredLoginPageIsAbandonedAndItsHandlerTold() async throws {
        let client = GatehouseClient(
            configuration: ClientConfiguration(serverURL: URL(string: "http://gateway.invalid")!, applicationID: SDK.pinApp,
                                               challengeTimeout: .milliseconds(300), logger: SDK.quietLogger),
            keyStore: InMemoryKeyStore(), transport: Self.gatewayTransport(Calls()))
        let page = IgnoredLoginPage()
        client.registerGatewayChallengeHandler(page)
        let error = try await SDK.bounded(30) { await SDK.error { _ = try await client.resourceRequest(path: "adapters/Open/data").send() } }
        #expect(error == .challengeTimedOut(securityCheck: "IgnoredLoginPage"))
        #expect(page.abandoned.all == [.challengeTimedOut(securityCheck: "IgnoredLoginPage")])
        #expect(page.submitSuccess() == false, "too late: reported, not silently taken")
    }

    /// The seeds' names still compile: KAAZING's `ChallengeHandler`, MobileFirst's `GatewayChallengeHandler`.
    @Test func theSeedsNamesAreAliases() {
        #expect((any ChallengeHandler).self == (any HTTPChallengeHandler).self)
        #expect(GatewayChallengeHandler.self == LoginPageChallengeHandler.self)
        let handler: any ChallengeHandler = BasicChallengeHandler()
        #expect(handler.canHandle(ChallengeRequest(location: URL(string: "http://h/")!, challenge: "Basic realm=\"r\"")))
    }
}
