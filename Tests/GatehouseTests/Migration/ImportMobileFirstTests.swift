import Foundation
import GatehouseProtocol
import Testing

/// `gatehouse import-mfp` (issue 40): a MobileFirst 8.0 project's descriptors — adapter.xml files as the Developer
/// Center's security-check samples write them, application descriptors as `mfpdev app pull` and the admin REST API
/// have them, a confidential-clients export — become a policy that loads, and the seed flows pass against a real
/// server running it. The fixtures are written here in those documented formats.
@Suite(.timeLimit(.minutes(3))) struct ImportMobileFirstTests {
    static let files: [String: String] = [
        "PinCodeAttempts/src/main/adapter-resources/adapter.xml": """
            <?xml version="1.0" encoding="UTF-8"?>
            <mfp:adapter name="PinCodeAttempts" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                xmlns:mfp="http://www.ibm.com/mfp/integration" xmlns:http="http://www.ibm.com/mfp/integration/http">
              <displayName>PinCodeAttempts</displayName>
              <description>A PIN with a few tries.</description>
              <securityCheckDefinition name="PinCodeAttempts" class="com.sample.PinCodeAttempts">
                <property name="pinCode" defaultValue="1234" description="The PIN"/>
                <property name="maxAttempts" defaultValue="3" description="Tries"/>
                <property name="blockedStateExpirationSec" defaultValue="60" description="Blocked for"/>
                <property name="successStateExpirationSec" defaultValue="60" description="Success for"/>
              </securityCheckDefinition>
            </mfp:adapter>
            """,
        "UserLogin/src/main/adapter-resources/adapter.xml": """
            <?xml version="1.0" encoding="UTF-8"?>
            <mfp:adapter name="UserLogin" xmlns:mfp="http://www.ibm.com/mfp/integration">
              <displayName>UserLogin</displayName>
              <securityCheckDefinition name="UserLogin" class="com.sample.UserLogin">
                <property name="maxAttempts" defaultValue="3"/>
                <property name="blockedStateExpirationSec" defaultValue="10"/>
                <property name="successStateExpirationSec" defaultValue="60"/>
                <property name="rememberMeDurationSec" defaultValue="120"/>
              </securityCheckDefinition>
            </mfp:adapter>
            """,
        "StepUp/src/main/adapter-resources/adapter.xml": """
            <?xml version="1.0" encoding="UTF-8"?>
            <mfp:adapter name="StepUp" xmlns:mfp="http://www.ibm.com/mfp/integration">
              <JAXRSApplicationClass>com.sample.StepUpApplication</JAXRSApplicationClass>
              <securityCheckDefinition name="StepUpUserLogin" class="com.sample.StepUpUserLogin">
                <property name="successStateExpirationSec" defaultValue="60" type="integer"/>
              </securityCheckDefinition>
              <securityCheckDefinition name="StepUpPinCode" class="com.sample.StepUpPinCode">
                <property name="successStateExpirationSec" defaultValue="60" type="integer"/>
              </securityCheckDefinition>
            </mfp:adapter>
            """,
        "ResourceAdapter/src/main/adapter-resources/adapter.xml": """
            <?xml version="1.0" encoding="UTF-8"?>
            <mfp:adapter name="ResourceAdapter" xmlns:mfp="http://www.ibm.com/mfp/integration">
              <JAXRSApplicationClass>com.sample.ResourceAdapterApplication</JAXRSApplicationClass>
            </mfp:adapter>
            """,
        "mobilefirst/application-descriptor.json": """
            {"applicationKey": {"bundleId": "com.sample.pincodeswift", "version": "1.0", "clientPlatform": "ios"},
             "displayName": "PinCodeSwift", "mandatoryScope": "appAuthenticity",
             "scopeElementMapping": {"accessRestricted": "PinCodeAttempts", "stepUp": "StepUpUserLogin appAuthenticity"},
             "securityCheckConfigurations": {"PinCodeAttempts": {"properties": {"maxAttempts": "5"}},
                                             "appAuthenticity": {"expirationSec": "1200"}},
             "maxTokenExpiration": 3600}
            """,
        "android/mobilefirst/application-descriptor.json": """
            {"applicationKey": {"packageName": "com.sample.pincodeandroid", "version": "1.0", "clientPlatform": "android"},
             "SecurityCheckConfigurations": {"UserLogin": {"maxAttempts": "2", "enableSSO": true}}}
            """,
        "UserLogin/adapter-configuration.json": """
            {"securityCheckDefinitions": {"UserLogin": {"properties": {"maxAttempts": "4"}}}}
            """,
        "confidential-clients.json": """
            {"clients": [{"id": "test", "displayName": "Test", "secret": "test", "allowedScope": "*"},
                         {"id": "balance-filter", "displayName": "Balance filter", "secret": "filter-secret-of-the-bank",
                          "allowedScope": "authorization.introspect"}]}
            """,
    ]

    /// The fixtures in a new folder.
    static func project() throws -> String {
        let root = TestServer.temporaryDirectory() + "-mfp"
        for (path, text) in files {
            let file = (root as NSString).appendingPathComponent(path)
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: file, atomically: true, encoding: .utf8)
        }
        return root
    }

    @Test func theSamplesBecomeAPolicyUnderWhichTheSeedFlowsPass() async throws {
        let root = try Self.project()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let out = root + "/policy.yaml"
        let imported = try await runOffThePool(GatehouseProcess.executable.path, ["import-mfp", root, "--out", out, "--cost", "4"])
        #expect(imported.status == 0, "\(imported.output)")
        let report = imported.output
        for line in [
            "carried: PinCodeAttempts: class com.sample.PinCodeAttempts is Gatehouse's PinCodeAttempts",
            "changed: StepUpPinCode: class com.sample.StepUpPinCode has no Gatehouse twin: mapped by its name to the built-in PinCodeAttempts",
            "changed: StepUpUserLogin: class com.sample.StepUpUserLogin has no Gatehouse twin: mapped by its name to the built-in UserLogin",
            "left out: com.sample.pincodeswift (ios): mandatory scope appAuthenticity",
            "left out: com.sample.pincodeswift (ios): scope element stepUp: appAuthenticity",
            "left out: com.sample.pincodeswift (ios): configuration of appAuthenticity",
            "left out: com.sample.pincodeandroid (android): enableSSO of UserLogin",
            "left out: confidential client test",
            "carried: confidential client balance-filter: secret hashed with bcrypt (cost 4)",
            "no securityCheckDefinition (a resource adapter)",
            "carried: UserLogin: adapter configuration maxAttempts",
            "The policy loads.",
        ] {
            #expect(report.contains(line), "missing from the report: \(line)\n\(report)")
        }
        let yaml = try String(contentsOfFile: out, encoding: .utf8)
        #expect(!yaml.contains("filter-secret-of-the-bank"), "the secret is never written")
        #expect(yaml.hasPrefix("# Imported from MobileFirst 8.0") && yaml.contains("# to do: users:"))

        // The seed flows against a server running it (users added, as the report asks).
        let users = "\nusers:\n  - { username: john, displayName: John Doe, passwordHash: \"$2b$10$76AvwGKgVW/h00AzoxZvzuD99o1F8N6mS5HjlLgyAdDz5Gn3Cb2uu\" }\n"
        try await TestServer.run(policy: yaml + users) { server async throws in
            var client = try ProtocolClient(server)
            try await client.register()
            // PinCodeAttempts with the application's maxAttempts (5, from its descriptor), the adapter's PIN.
            let challenge = try await client.preauthorize(scope: "accessRestricted")
            #expect(challenge.status == 401)
            #expect(challenge.json?["challenges"]?["PinCodeAttempts"]?["remainingAttempts"] == 5, "\(String(decoding: challenge.body, as: UTF8.self))")
            let wrong = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "0000"]])
            #expect(wrong.json?["challenges"]?["PinCodeAttempts"]?["remainingAttempts"] == 4)
            #expect(try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]]).status == 200)
            #expect(try await client.obtainToken(scope: "accessRestricted").access_token.isEmpty == false)
            // UserLogin (the adapter's check, with the policy's users).
            // UserLogin's attempts from the adapter's configuration (4), over its descriptor's default (3).
            let asked = try await client.preauthorize(scope: "UserLogin")
            #expect(asked.json?["challenges"]?["UserLogin"]?["remainingAttempts"] == 4, "\(String(decoding: asked.body, as: UTF8.self))")
            let login = try await client.preauthorize(scope: "UserLogin", answers: ["UserLogin": ["username": "john", "password": "demo"]])
            #expect(login.status == 200, "\(String(decoding: login.body, as: UTF8.self))")
            // The mapped scope element stepUp: StepUpUserLogin, a UserLogin.
            let stepUp = try await client.preauthorize(scope: "stepUp")
            #expect(stepUp.status == 401 && stepUp.json?["challenges"]?["StepUpUserLogin"] != nil, "\(String(decoding: stepUp.body, as: UTF8.self))")
            // The confidential client with its secret; MobileFirst's development client is not carried.
            func token(_ id: String, _ secret: String) async throws -> Int {
                try await HTTP.postForm(server.baseURL + "/mfp/api/az/v1/token", [("grant_type", "client_credentials"), ("scope", "authorization.introspect")],
                                        headers: [("Authorization", "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString())]).status
            }
            #expect(try await token("balance-filter", "filter-secret-of-the-bank") == 200)
            #expect(try await token("test", "test") == 401)
        }
    }

    @Test func aClassWithoutCounterpartIsAStubUntilMapped() async throws {
        let root = try Self.project()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let custom = root + "/SmsOtp/adapter.xml"
        try FileManager.default.createDirectory(atPath: root + "/SmsOtp", withIntermediateDirectories: true)
        try """
            <mfp:adapter name="SmsOtp" xmlns:mfp="http://www.ibm.com/mfp/integration">
              <securityCheckDefinition name="SmsOtp" class="com.acme.security.SmsOtp">
                <property name="codeLength" defaultValue="6" type="integer"/>
              </securityCheckDefinition>
            </mfp:adapter>
            """.write(toFile: custom, atomically: true, encoding: .utf8)
        let stub = try await runOffThePool(GatehouseProcess.executable.path, ["import-mfp", custom])
        #expect(stub.status == 0)
        #expect(stub.output.contains("to do: SmsOtp: class com.acme.security.SmsOtp has no Gatehouse counterpart: write it in Swift and register it as \"SmsOtp\""),
                "\(stub.output)")
        #expect(stub.output.contains("class: SmsOtp") && stub.output.contains("codeLength: 6"), "the stub keeps its properties")
        #expect(stub.output.contains("The policy does not load yet") && stub.output.contains("SmsOtp"))
        let descriptor = root + "/mobilefirst/application-descriptor.json"
        let missing = try await runOffThePool(GatehouseProcess.executable.path, ["import-mfp", custom, descriptor])
        #expect(missing.output.contains("to do: com.sample.pincodeswift (ios): PinCodeAttempts is named but no adapter descriptor given defines it"),
                "\(missing.output)")
        let mapped = try await runOffThePool(GatehouseProcess.executable.path, ["import-mfp", root, "--map", "com.acme.security.SmsOtp=PinCodeAttempts"])
        #expect(mapped.output.contains("mapped to PinCodeAttempts, as asked") && mapped.output.contains("The policy loads."), "\(mapped.output)")

        // Bad input: a clear error, nothing written.
        let broken = root + "/broken.xml"
        try "<mfp:adapter><securityCheckDefinition name=\"x\"".write(toFile: broken, atomically: true, encoding: .utf8)
        let refused = try await runOffThePool(GatehouseProcess.executable.path, ["import-mfp", broken, "--out", root + "/never.yaml"])
        #expect(refused.status != 0 && refused.output.contains("broken.xml"), "\(refused.output)")
        #expect(!FileManager.default.fileExists(atPath: root + "/never.yaml"))
        let nothing = try await runOffThePool(GatehouseProcess.executable.path, ["import-mfp", root + "/ResourceAdapter/src/main/adapter-resources"])
        #expect(nothing.status == 0 && nothing.output.contains("a resource adapter"), "\(nothing.output)")
    }
}
