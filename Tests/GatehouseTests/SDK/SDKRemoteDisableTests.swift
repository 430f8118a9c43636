import Foundation
import GatehouseClient
import GatehouseProtocol
import Testing

/// The Swift SDK and application management (issue 38): an administrator's notice is an event the app shows (the
/// SDK acknowledges it, and the flow goes on), a disabled version a typed error with the message and the download link;
/// an app's own `wl_remoteDisableRealm` handler takes the notice instead.
@Suite(.timeLimit(.minutes(3))) struct SDKRemoteDisableTests {
    @Test func aNoticeIsAnEventAndTheFlowGoesOn() async throws {
        try await TestServer.run(policy: RemoteDisableTests.policy) { server in
            let client = SDK.client(server, version: "2.1")
            let events = client.events()
            let pins = Calls<JSONObject>()
            try client.registerChallengeHandler(SDK.pinHandler(pins))
            let token = try await client.obtainAccessToken(forScope: "accessRestricted")
            #expect(token.scope == "RegisteredClient accessRestricted" && pins.count == 1)
            var notices: [JSONObject] = []
            for await event in events {
                if event.kind == .administratorMessage { notices.append(event.payload ?? [:]) }
                if event.kind == .tokenObtained { break }
            }
            #expect(notices.count == 1 && notices.first?["message"] == "Maintenance tonight 22:00-23:00.", "\(notices)")
            #expect(notices.first?["messageType"] == "NOTIFY" && notices.first?["messageId"]?.stringValue != nil)
        }
    }

    @Test func aDisabledVersionIsATypedErrorWithItsLink() async throws {
        try await TestServer.run(policy: RemoteDisableTests.policy) { server in
            let client = SDK.client(server, version: "1.4")
            try client.registerChallengeHandler(SDK.pinHandler(Calls<JSONObject>()))
            do {
                _ = try await client.obtainAccessToken(forScope: "accessRestricted")
                Issue.record("a disabled version obtained a token")
            } catch let error as GatehouseClientError {
                #expect(error.code == .applicationDisabled)
                #expect(error.message == "This version is no longer supported." && error.url == "https://apps.example.com/pincode")
                #expect(error.securityCheck == RemoteDisableWire.checkName)
            }
        }
    }

    @Test func anAppsOwnHandlerTakesTheNotice() async throws {
        try await TestServer.run(policy: RemoteDisableTests.policy) { server in
            let client = SDK.client(server, version: "2.2")
            let notices = Calls<JSONObject>()
            try client.registerChallengeHandler(ClosureChallengeResponder(securityCheck: RemoteDisableWire.checkName) { notice in
                notices.record(notice)
                return .answer([RemoteDisableWire.messageID: notice[RemoteDisableWire.messageID] ?? .null])
            })
            try client.registerChallengeHandler(SDK.pinHandler(Calls<JSONObject>()))
            _ = try await client.obtainAccessToken(forScope: "accessRestricted")
            #expect(notices.all.map { $0["message"] } == ["Another notice."])
        }
    }
}
