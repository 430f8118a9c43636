import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseServer
import Testing

/// Application management (issue 38): an application version's status — active, notify, disabled — as MobileFirst
/// clients receive it, through the check `wl_remoteDisableRealm`. The shapes are the ones the MobileFirst web SDK's
/// built-in handler reads (ibmmfpf.js, remoteDisableChallengeHandler.js: `obj.message`, `obj.messageId`,
/// `obj.messageType == "NOTIFY"`, answer `{messageId}`; failure `err.message`, `err.downloadLink`).
@Suite(.timeLimit(.minutes(3))) struct RemoteDisableTests {
    static let policy = TestPolicies.standard.replacingOccurrences(of: """
          - id: com.sample.pincodeswift
            platform: ios
            scopeElementMapping: { accessRestricted: PinCodeAttempts, both: "SimpleCaptcha PinCodeAttempts", open: "" }
        """, with: """
          - id: com.sample.pincodeswift
            platform: ios
            scopeElementMapping: { accessRestricted: PinCodeAttempts, both: "SimpleCaptcha PinCodeAttempts", open: "" }
            versions:
              - { versions: "< 2.0", status: disabled, message: "This version is no longer supported.", downloadLink: "https://apps.example.com/pincode" }
              - { versions: "2.1", status: notify, message: "Maintenance tonight 22:00-23:00.", messages: { de: "Wartung heute 22-23 Uhr." } }
              - { versions: "2.2", status: notify, message: "Another notice." }
              - { versions: ">= 3", status: active }
        """)

    static func preauthorize(_ client: ProtocolClient, scope: String, answers: [String: JSON]? = nil, language: String? = nil) async throws -> (Int, JSON) {
        var headers = [("Content-Type", "application/json")]
        if let language { headers.append(("Accept-Language", language)) }
        let body = try JSONEncoder().encode(PreauthorizeRequest(clientID: client.clientID ?? "", scope: scope, challengeResponse: answers))
        let response = try await HTTP.send(.POST, client.api + "/preauth/v1/preauthorize", headers: headers, body: body)
        return (response.status, try JSONDecoder().decode(JSON.self, from: response.body))
    }

    @Test func versionRangesCompareDottedNumbers() throws {
        let below = try #require(VersionRange("< 2.0"))
        #expect(below.contains("1.9") && below.contains("1.10.3") && !below.contains("2") && !below.contains("2.0.0") && !below.contains(nil))
        #expect(try #require(VersionRange(">= 1.10")).contains("1.10") && !(try #require(VersionRange(">= 1.10")).contains("1.9")))
        #expect(try #require(VersionRange("2.1")).contains("2.1") && !(try #require(VersionRange("2.1")).contains("2.1.0")))
        #expect(try #require(VersionRange("*")).contains(nil) && (try #require(VersionRange("*")).contains("0.1")))
        // A version that is not dotted numbers is compared exactly only.
        #expect(!(try #require(VersionRange("< 2.0")).contains("1.0-beta")))
        for refused in ["< two", "<= ", "> 1..2", "1 2", "=< 1"] { #expect(VersionRange(refused) == nil, "\(refused)") }
        let rule = RemoteDisable.Rule(versions: .init("*")!, status: .notify, message: "en", messages: ["de": "de", "pt-BR": "br"])
        #expect(rule.message(acceptLanguage: "fr, de-CH;q=0.8, en;q=0.5") == "de")
        #expect(rule.message(acceptLanguage: "pt-br") == "br" && rule.message(acceptLanguage: "de;q=0, fr") == "en" && rule.message(acceptLanguage: nil) == "en")
    }

    @Test func aDisabledVersionGetsTheFailureAloneAndNoToken() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            var client = try ProtocolClient(server, version: "1.4")
            try await client.register()
            let (status, answer) = try await Self.preauthorize(client, scope: "accessRestricted")
            #expect(status == 403)
            #expect(answer["failures"] == ["wl_remoteDisableRealm": ["message": "This version is no longer supported.",
                                                                     "downloadLink": "https://apps.example.com/pincode"]])
            #expect(answer["challenges"]?["PinCodeAttempts"] == nil, "no other check asks anything of a disabled version")
            // Even the registered-client scope: no token.
            #expect(try await Self.preauthorize(client, scope: "").0 == 403)
            #expect(try await client.authorize(scope: "accessRestricted").status == 403)
        }
    }

    @Test func aNotifiedVersionIsToldOncePerMessageThenServed() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            var client = try ProtocolClient(server, version: "2.1")
            try await client.register()
            let (status, first) = try await Self.preauthorize(client, scope: "accessRestricted", language: "de-DE, en;q=0.5")
            #expect(status == 401)
            let challenge = try #require(first["challenges"]?["wl_remoteDisableRealm"])
            #expect(challenge["message"] == "Wartung heute 22-23 Uhr." && challenge["messageType"] == "NOTIFY")
            let messageID = try #require(challenge["messageId"]?.stringValue)
            #expect(first["challenges"]?["PinCodeAttempts"] == nil)
            // A wrong id is the same challenge again; the right one goes on to the app's own check.
            #expect(try await Self.preauthorize(client, scope: "accessRestricted", answers: ["wl_remoteDisableRealm": ["messageId": "other"]])
                .1["challenges"]?["wl_remoteDisableRealm"]?["messageId"]?.stringValue == messageID)
            let (_, second) = try await Self.preauthorize(client, scope: "accessRestricted", answers: ["wl_remoteDisableRealm": ["messageId": .string(messageID)]])
            #expect(second["successes"]?["wl_remoteDisableRealm"] != nil)
            #expect(second["challenges"]?["PinCodeAttempts"] != nil && second["challenges"]?["wl_remoteDisableRealm"] == nil)
            let (pinStatus, _) = try await Self.preauthorize(client, scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]])
            #expect(pinStatus == 200)
            _ = try await client.obtainToken(scope: "accessRestricted")
            // The next token: no message again.
            let (againStatus, again) = try await Self.preauthorize(client, scope: "accessRestricted")
            #expect(againStatus == 200 && again["challenges"] == nil, "\(again)")
            // Another version's other message has another id.
            var other = try ProtocolClient(server, version: "2.2")
            try await other.register()
            let otherID = try await Self.preauthorize(other, scope: "accessRestricted").1["challenges"]?["wl_remoteDisableRealm"]?["messageId"]?.stringValue
            #expect(otherID != nil && otherID != messageID)
        }
    }

    @Test func anActiveVersionSeesNothingOfIt() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            for version in ["3.0", "2.0"] {   // `>= 3` active, `2.0` matched by no rule
                var client = try ProtocolClient(server, version: version)
                try await client.register()
                let (status, answer) = try await Self.preauthorize(client, scope: "accessRestricted")
                #expect(status == 401)
                #expect(answer["challenges"]?.objectValue?.keys.sorted() == ["PinCodeAttempts"], "\(version): \(answer)")
            }
        }
    }

    @Test func aPolicyNamesAWrongVersionRule() throws {
        for (rule, key, problem) in [
            ("{ versions: \"< two\", status: disabled, message: m }", "versions", "must be"),
            ("{ status: paused, message: m }", "status", "must be active, notify or disabled"),
            ("{ status: notify }", "message", "is required with status notify"),
            ("{ status: disabled, message: m, downloadLink: \"javascript:alert(1)\" }", "downloadLink", "must be an https"),
        ] {
            let policy = "securityChecks: { Pin: { class: PinCodeAttempts } }\napplications:\n  - { id: a, platform: ios, versions: [\(rule)] }\n"
            do {
                _ = try SecurityPolicy.parse(yaml: policy, file: "policy.yaml", registry: .builtIn,
                                             services: SecurityCheckServices(users: PolicyTests.NoUsers()))
                Issue.record("accepted: \(rule)")
            } catch let error as PolicyError {
                #expect(error.key == "applications[0].versions[0].\(key)" && error.problem.contains(problem), "\(error)")
            }
        }
        // A misspelt key is refused, named by its place.
        do {
            _ = try SecurityPolicy.parse(yaml: "securityChecks: { Pin: { class: PinCodeAttempts } }\napplications:\n  - { id: a, platform: ios, versions: [{ status: notify, mesage: m }] }\n",
                                         file: "policy.yaml", registry: .builtIn, services: SecurityCheckServices(users: PolicyTests.NoUsers()))
            Issue.record("a misspelt key was accepted")
        } catch let error as PolicyError {
            #expect("\(error)".contains("applications[0].versions[0].mesage"), "\(error)")
        }
    }
}
