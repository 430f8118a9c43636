import Foundation
import GatehouseClient
import GatehouseProtocol
import Testing

/// Device management (issue 38): operators find devices by display name, user or application, set a device `LOST`
/// (every application on it refused, its tokens inactive at once) or block one application on it alone, and
/// unregister it; the Swift SDK sets the display name and surfaces the refusal as a typed error. Against the real
/// server, with the SDK and the admin API over HTTP.
@Suite(.timeLimit(.minutes(3))) struct DevicesAdminTests {
    static let introspector = ("Authorization", "Basic " + Data("balance-service:s3cret".utf8).base64EncodedString())

    /// An SDK client of `app` on device `device`.
    static func client(_ server: TestServer, device: String, app: String = SDK.pinApp, platform: String = "ios") -> GatehouseClient {
        GatehouseClient(
            configuration: ClientConfiguration(
                serverURL: URL(string: server.baseURL)!, applicationID: app, platform: platform, version: "1.0",
                device: DeviceData(id: device, hardware: "TestPhone", platform: "ios 18"), logger: SDK.quietLogger),
            keyStore: InMemoryKeyStore(), transport: URLSessionTransport())
    }

    static func token(_ client: GatehouseClient) async throws -> AccessToken {
        try client.registerChallengeHandler(SDK.pinHandler(Calls<JSONObject>()))
        return try await client.obtainAccessToken(forScope: "accessRestricted")
    }

    static func isActive(_ token: AccessToken, _ server: TestServer) async throws -> Bool {
        let answer = try await HTTP.postForm(server.baseURL + "/mfp/api/az/v1/introspection", [("token", token.value)], headers: [introspector])
        return answer.json?["active"] == true
    }

    static func put(_ server: TestServer, _ device: String, _ body: String, token: String) async throws -> TestResponse {
        try await HTTP.send(.PUT, server.baseURL + "/admin/v1/devices/\(device)",
                            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")], body: Data(body.utf8))
    }

    /// The error a token request fails with.
    static func refusal(_ client: GatehouseClient) async -> GatehouseClientError? {
        do {
            _ = try await client.obtainAccessToken(forScope: "accessRestricted")
            return nil
        } catch {
            return error
        }
    }

    @Test func aLostDeviceIsRefusedAtOnceWhileAnotherDeviceIsNot() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let lost = Self.client(server, device: "phone-lost"), other = Self.client(server, device: "phone-other")
            try await lost.setDeviceDisplayName("Ann's phone")
            let lostToken = try await Self.token(lost), otherToken = try await Self.token(other)
            #expect(try await Self.isActive(lostToken, server))
            let writer = try await Admin.writer(server), reader = try await Admin.reader(server)

            // Found by its display name, active.
            let found = try await Admin.send(.GET, server, "/devices?displayName=Ann%27s%20phone", token: reader)
            #expect(found.status == 200)
            let devices = found.json?["devices"]?.arrayValue ?? []
            #expect(devices.count == 1 && devices.first?["id"] == "phone-lost" && devices.first?["status"] == "ACTIVE", "\(devices)")
            #expect(devices.first?["registrations"]?.arrayValue?.first?["application"]?["id"] == .string(SDK.pinApp))
            // Renamed once registered: the registration is updated at once.
            try await other.setDeviceDisplayName("Bob's tablet")
            #expect(try await other.deviceDisplayName == "Bob's tablet")
            let renamed = try await Admin.send(.GET, server, "/devices?displayName=Bob%27s%20tablet", token: reader).json?["devices"]?.arrayValue
            #expect(renamed?.first?["id"] == "phone-other", "\(String(describing: renamed))")
            await #expect(throws: GatehouseClientError.self) { try await other.setDeviceDisplayName("") }

            // Marked lost (in any letter case): refused, its token inactive at once; the other device is not.
            #expect(try await Self.put(server, "phone-lost", #"{"status":"lost"}"#, token: reader).status == 403, "a reader cannot")
            let marked = try await Self.put(server, "phone-lost", #"{"status":"lost"}"#, token: writer)
            #expect(marked.status == 200 && marked.json?["status"] == "LOST", "\(String(decoding: marked.body, as: UTF8.self))")
            #expect(try await !Self.isActive(lostToken, server))
            #expect(try await Self.isActive(otherToken, server))
            await lost.clearAccessToken(lostToken)
            let error = await Self.refusal(lost)
            #expect(error?.code == .deviceBlocked, "\(String(describing: error))")
            #expect(error?.failures?[DeviceAccessWire.failureName]?["status"] == "LOST")
            await other.clearAccessToken(otherToken)
            _ = try await other.obtainAccessToken(forScope: "accessRestricted")

            // The raw answer: 403 with the failure, as MobileFirst SDKs read failures.
            let lostID = try #require(try await lost.clientID)
            let raw = try await HTTP.send(.POST, server.baseURL + "/mfp/api/preauth/v1/preauthorize", headers: [("Content-Type", "application/json")],
                                          body: Data(#"{"client_id":"\#(lostID)","scope":"accessRestricted"}"#.utf8))
            #expect(raw.status == 403)
            #expect(raw.json?["failures"]?[DeviceAccessWire.failureName]?["failure"]?.stringValue?.contains("lost") == true)

            // Active again: a token.
            #expect(try await Self.put(server, "phone-lost", #"{"status":"ACTIVE"}"#, token: writer).json?["status"] == "ACTIVE")
            _ = try await lost.obtainAccessToken(forScope: "accessRestricted")

            // Refused input: an unknown status, an unknown member, an unknown device.
            #expect(try await Self.put(server, "phone-lost", #"{"status":"MISPLACED"}"#, token: writer).status == 400)
            #expect(try await Self.put(server, "phone-lost", #"{"colour":"red"}"#, token: writer).status == 400)
            #expect(try await Self.put(server, "phone-lost", "not json", token: writer).status == 400)
            #expect(try await Self.put(server, "no-such-phone", #"{"status":"LOST"}"#, token: writer).status == 404)

            // Audited with the operator.
            let audit = try await Admin.send(.GET, server, "/audit?limit=1000", token: reader).json?["events"]?.arrayValue ?? []
            let updates = audit.filter { $0["event"] == "admin.device.update" }
            #expect(updates.count == 2 && updates.allSatisfy { $0["actor"] == "ops" }, "\(updates)")
            #expect(audit.contains { $0["event"] == "device.refused" && $0["detail"] == "LOST" })
        }
    }

    @Test func oneApplicationBlockedOnADeviceLeavesItsOtherApplications() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let pin = Self.client(server, device: "shared-tablet")
            let short = Self.client(server, device: "shared-tablet", app: "com.sample.short", platform: "android")
            _ = try await Self.token(pin)
            _ = try await Self.token(short)
            let writer = try await Admin.writer(server)
            let device = try await Admin.send(.GET, server, "/devices/shared-tablet", token: writer).json
            #expect(device?["registrations"]?.arrayValue?.count == 2)

            let blocked = try await Self.put(server, "shared-tablet", #"{"blockedApplications":["com.sample.short"]}"#, token: writer)
            #expect(blocked.json?["status"] == "ACTIVE" && blocked.json?["blockedApplications"] == ["com.sample.short"])
            let flags = (blocked.json?["registrations"]?.arrayValue ?? []).map { ($0["application"]?["id"]?.stringValue ?? "", $0["blocked"]) }
            #expect(Set(flags.map { "\($0.0)=\($0.1 == true)" }) == ["com.sample.short=true", "\(SDK.pinApp)=false"])

            await short.clearAccessToken(try await short.obtainAccessToken(forScope: "accessRestricted"))
            let error = await Self.refusal(short)
            #expect(error?.code == .deviceBlocked && error?.failures?[DeviceAccessWire.failureName]?["application"] == "com.sample.short")
            let pinToken = try await pin.obtainAccessToken(forScope: "accessRestricted")
            #expect(try await Self.isActive(pinToken, server))
        }
    }

    @Test func anUnregisteredDeviceLosesItsRegistrationsAndTokens() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let client = Self.client(server, device: "old-phone")
            let token = try await Self.token(client)
            let clientID = try #require(try await client.clientID)
            let writer = try await Admin.writer(server)
            _ = try await Self.put(server, "old-phone", #"{"status":"STOLEN"}"#, token: writer)

            let deleted = try await Admin.send(.DELETE, server, "/devices/old-phone", token: writer)
            #expect(deleted.status == 200 && deleted.json?["registrations"] == [.string(clientID)])
            #expect(try await !Self.isActive(token, server))
            #expect(try await Admin.send(.GET, server, "/registrations/\(clientID)", token: writer).status == 404)
            #expect(try await Admin.send(.GET, server, "/devices/old-phone", token: writer).status == 404, "its hold went too")
            #expect(try await Admin.send(.DELETE, server, "/devices/old-phone", token: writer).status == 404)

            // The app registers again on the same device: a new client, active (the device's hold went with it).
            await client.clearAccessToken(token)
            _ = try await client.obtainAccessToken(forScope: "accessRestricted")
            #expect(try await client.clientID != clientID)
        }
    }

    @Test func aRegistrationCannotMoveToAnotherDevice() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let clientID = try #require(client.clientID)
            var data = client.registrationData()
            data.device.id = "another-device"
            let jws = try JWS.sign(data, with: client.key, kid: clientID)
            let update = try await HTTP.send(.PUT, client.api + "/registration/v1/self/\(clientID)", headers: [("Content-Type", "application/json")],
                                             body: try JSONEncoder().encode(RegistrationRequest(signedRegistrationData: jws)))
            #expect(update.status == 403, "\(String(decoding: update.body, as: UTF8.self))")
            // The display name can change.
            data = client.registrationData()
            data.device.deviceDisplayName = "Kitchen tablet"
            let renamed = try await HTTP.send(.PUT, client.api + "/registration/v1/self/\(clientID)", headers: [("Content-Type", "application/json")],
                                              body: try JSONEncoder().encode(RegistrationRequest(signedRegistrationData: JWS.sign(data, with: client.key, kid: clientID))))
            #expect(renamed.status == 200)
            let found = try await Admin.send(.GET, server, "/devices?displayName=Kitchen%20tablet", token: try await Admin.reader(server))
            #expect(found.json?["devices"]?.arrayValue?.first?["displayName"] == "Kitchen tablet")
        }
    }

    @Test func aCheckNamedLikeGatehousesOwnFailuresIsRefused() async throws {
        let policy = TestPolicies.standard.replacingOccurrences(of: "  PinDefaultBlock:\n", with: "  gatehouse_deviceAccess:\n")
        #expect(policy != TestPolicies.standard)
        let error = await #expect(throws: (any Error).self) { try await TestServer.run(policy: policy) { _ in } }
        #expect("\(String(describing: error))".contains("gatehouse_"), "\(String(describing: error))")
    }
}
