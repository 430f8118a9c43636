import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore
import Testing

/// The store methods of the admin API and the audit log, on SQLite and PostgreSQL.
@Suite(.timeLimit(.minutes(3))) struct AdminStoreConformanceTests {
    static func registration(_ clientID: String, app: String, device: String) -> ClientRegistrationRecord {
        ClientRegistrationRecord(
            clientID: clientID,
            data: RegistrationData(device: DeviceData(id: device), application: ApplicationData(id: app, clientPlatform: "ios", version: nil)),
            publicKey: RSAPublicJWK(n: "AQAB-modulus", e: "AQAB"), createdAt: 1_000, updatedAt: 1_000)
    }

    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.allCases)
    func registrationsAreSearchedAndPagedByAStableCursor(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            for index in 0..<25 {
                try await store.createRegistration(Self.registration(
                    String(format: "c%02d", index), app: index % 2 == 0 ? "com.even" : "com.odd", device: "device-\(index % 5)"))
            }
            try await store.setActiveUser(clientID: "c03", userID: "john")
            try await store.setActiveUser(clientID: "c07", userID: "john")
            try await store.setActiveUser(clientID: "c08", userID: "jane")

            var pages: [[String]] = []
            var after: String?
            repeat {
                let page = try await store.registrations(RegistrationQuery(after: after, limit: 10)).map(\.registration.clientID)
                if !page.isEmpty { pages.append(page) }
                after = page.count == 10 ? page.last : nil
                // A registration created meanwhile before the cursor changes no later page.
                if pages.count == 1 { try await store.createRegistration(Self.registration("a-new", app: "com.odd", device: "x")) }
            } while after != nil
            #expect(pages.map(\.count) == [10, 10, 5])
            #expect(pages.flatMap { $0 } == (0..<25).map { String(format: "c%02d", $0) })

            let odd = try await store.registrations(RegistrationQuery(applicationID: "com.odd", limit: 100)).map(\.registration.clientID)
            #expect(odd.count == 13 && odd.first == "a-new")
            let device = try await store.registrations(RegistrationQuery(applicationID: "com.even", deviceID: "device-0", limit: 100))
            #expect(device.map(\.registration.clientID) == ["c00", "c10", "c20"])
            let john = try await store.registrations(RegistrationQuery(userID: "john", limit: 100))
            #expect(john.map(\.registration.clientID) == ["c03", "c07"] && john.allSatisfy { $0.userID == "john" })
            try await store.setActiveUser(clientID: "c03", userID: nil)
            #expect(try await store.registrations(RegistrationQuery(userID: "john", limit: 100)).map(\.registration.clientID) == ["c07"])

            // An update moves the registration to its new application and device.
            var moved = Self.registration("c00", app: "com.odd", device: "device-9")
            moved.updatedAt = 2_000
            try await store.updateRegistration(moved)
            #expect(try await store.registrations(RegistrationQuery(deviceID: "device-9", limit: 5)).map(\.registration) == [moved])
        }
    }

    /// Devices: found by display name, held (status, blocked applications) and read with each client's round in the
    /// same read; a hold that blocks nothing is not kept; unregistering removes every registration, state and hold.
    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.allCases)
    func devicesAreHeldFoundAndUnregistered(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            var named = Self.registration("c1", app: "com.a", device: "phone")
            named.data.device.deviceDisplayName = "Ann's phone"
            try await store.createRegistration(named)
            try await store.createRegistration(Self.registration("c2", app: "com.b", device: "phone"))
            try await store.createRegistration(Self.registration("c3", app: "com.a", device: "tablet"))
            #expect(try await store.commit(clientID: "c1", writes: [StateWrite(name: "@client", expectedVersion: 0, data: Array("{}".utf8))]))

            #expect(try await store.registrations(RegistrationQuery(deviceDisplayName: "Ann's phone", limit: 10)).map(\.registration.clientID) == ["c1"])
            var renamed = Self.registration("c3", app: "com.a", device: "tablet")
            renamed.data.device.deviceDisplayName = "Kitchen"
            try await store.updateRegistration(renamed)
            #expect(try await store.registrations(RegistrationQuery(deviceDisplayName: "Kitchen", limit: 10)).map(\.registration.clientID) == ["c3"])

            #expect(try await store.storedClient(clientID: "c1")?.device == nil)
            let lost = DeviceAccessRecord(deviceID: "phone", status: .lost, blockedApplications: ["com.b", "com.b"], updatedAt: 5)
            #expect(lost.blockedApplications == ["com.b"])
            try await store.saveDeviceAccess(lost)
            #expect(try await store.storedClient(clientID: "c1")?.device == lost)
            #expect(try await store.storedClient(clientID: "c2")?.device == lost)
            #expect(try await store.storedClient(clientID: "c3")?.device == nil)
            #expect(try await store.storedClient(clientID: "c1")?.state.count == 1, "the state is read as before")
            var replaced = lost
            replaced.status = .active
            try await store.saveDeviceAccess(replaced)
            #expect(try await store.deviceAccess(deviceIDs: ["phone", "tablet"]) == [replaced])
            replaced.blockedApplications = []
            try await store.saveDeviceAccess(replaced)
            #expect(try await store.deviceAccess(deviceIDs: ["phone"]).isEmpty, "a hold that blocks nothing is removed")

            try await store.saveDeviceAccess(lost)
            #expect(Set(try await store.deleteDevice(deviceID: "phone")) == ["c1", "c2"])
            #expect(try await store.storedClient(clientID: "c1") == nil)
            #expect(try await store.clientState(clientID: "c1").isEmpty)
            #expect(try await store.deviceAccess(deviceIDs: ["phone"]).isEmpty)
            #expect(try await store.registration(clientID: "c3") == renamed, "another device's registration stays")
            #expect(try await store.deleteDevice(deviceID: "phone").isEmpty)
        }
    }

    /// The versions an operator sees before notifying or disabling one: registrations counted by application,
    /// platform and version (none for web apps), ordered, bounded.
    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.allCases)
    func registrationsAreCountedByApplicationVersion(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            let versions: [(String, String, String?)] = [("com.b", "ios", "2.0"), ("com.b", "ios", "1.10"), ("com.b", "ios", "2.0"),
                                                          ("com.a", "web", nil), ("com.b", "android", "2.0"), ("com.a", "web", nil)]
            for (index, (app, platform, version)) in versions.enumerated() {
                var record = Self.registration("v\(index)", app: app, device: "d\(index)")
                record.data.application = ApplicationData(id: app, clientPlatform: platform, version: version)
                try await store.createRegistration(record)
            }
            let counted = try await store.applicationVersions(limit: 100)
            #expect(counted == [
                .init(application: "com.a", platform: "web", version: nil, registrations: 2),
                .init(application: "com.b", platform: "android", version: "2.0", registrations: 1),
                .init(application: "com.b", platform: "ios", version: "1.10", registrations: 1),
                .init(application: "com.b", platform: "ios", version: "2.0", registrations: 2),
            ], "\(counted)")
            #expect(try await store.applicationVersions(limit: 2).count == 2)
        }
    }

    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.allCases)
    func deletingARegistrationDeletesItsState(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            try await store.createRegistration(Self.registration("gone", app: "com.a", device: "d"))
            try await store.createRegistration(Self.registration("kept", app: "com.a", device: "d"))
            for id in ["gone", "kept"] {
                #expect(try await store.commit(clientID: id, writes: [StateWrite(name: "Check", expectedVersion: 0, data: Array("{}".utf8))]))
            }
            #expect(try await store.deleteRegistration(clientID: "gone"))
            #expect(try await store.deleteRegistration(clientID: "gone") == false)
            #expect(try await store.registration(clientID: "gone") == nil)
            #expect(try await store.clientState(clientID: "gone").isEmpty)
            #expect(try await store.clientState(clientID: "kept").count == 1)
            #expect(try await store.registrations(RegistrationQuery(limit: 10)).map(\.registration.clientID) == ["kept"])
        }
    }

    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.allCases)
    func auditEventsAreAppendedInOrderPagedAndExpire(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.auditEvents(after: 0, limit: 10).isEmpty)
            try await store.appendAudit([
                AuditEvent(time: 1_000, event: "registration", clientID: "c1", application: "com.a", address: "127.0.0.1", node: "n1"),
                AuditEvent(time: 2_000, event: "check.failure", clientID: "c1", check: "Pin"),
            ])
            try await store.appendAudit([AuditEvent(time: 3_000, event: "token.issued", clientID: "c1", user: "john", detail: "scope")])
            let all = try await store.auditEvents(after: 0, limit: 10)
            #expect(all.map(\.event) == ["registration", "check.failure", "token.issued"])
            #expect(all.map(\.id) == all.map(\.id).sorted() && Set(all.map(\.id)).count == 3 && all[0].id > 0)
            #expect(all[0].address == "127.0.0.1" && all[0].node == "n1" && all[2].user == "john")
            let second = try await store.auditEvents(after: all[0].id, limit: 1)
            #expect(second.map(\.event) == ["check.failure"])
            #expect(try await store.deleteAudit(before: 2_500) == 2)
            #expect(try await store.auditEvents(after: 0, limit: 10).map(\.event) == ["token.issued"])
            try await store.appendAudit([AuditEvent(time: 4_000, event: "admin.unblock")])
            let last = try await store.auditEvents(after: 0, limit: 10)
            #expect(last.map(\.event) == ["token.issued", "admin.unblock"] && last[1].id > all[2].id)
        }
    }

    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.allCases)
    func appliedPoliciesAreVersionedAndAVersionIsStoredOnce(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.latestPolicyVersion() == 0)
            #expect(try await store.latestPolicy() == nil)
            let first = StoredPolicy(version: 1, yaml: "applications: []\n", appliedAt: 10, actor: "ops")
            try await store.insertPolicy(first)
            let second = StoredPolicy(version: 2, yaml: "applications:\n  - id: x\n", appliedAt: 20, actor: "ops")
            try await store.insertPolicy(second)
            #expect(try await store.latestPolicyVersion() == 2)
            #expect(try await store.latestPolicy() == second)
            // Two operators applying at once: the second insert of a version is refused, the first one kept.
            await #expect(throws: StoreError.duplicate) {
                try await store.insertPolicy(StoredPolicy(version: 2, yaml: "other", appliedAt: 30, actor: "other"))
            }
            #expect(try await store.latestPolicy() == second)
        }
    }

    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.allCases)
    func usersFactorsAreWrittenByCompareAndSet(_ kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.userFactor(username: "john", factor: "TOTP") == nil)
            let record = UserFactorRecord(username: "john", factor: "TOTP", data: #"{"secret":"A"}"#, enrolledAt: 5_000)
            #expect(try await store.saveUserFactor(record, expectedVersion: 0))
            // A second enrolment (another device at the same moment) loses.
            #expect(try await !store.saveUserFactor(record, expectedVersion: 0))
            let stored = try #require(try await store.userFactor(username: "john", factor: "TOTP"))
            #expect(stored.data == record.data && stored.enrolledAt == 5_000 && stored.version == 1)
            var used = stored
            used.data = #"{"secret":"B"}"#
            #expect(try await store.saveUserFactor(used, expectedVersion: 1))
            // The same recovery code spent twice: the second write names a version that is gone.
            #expect(try await !store.saveUserFactor(used, expectedVersion: 1))
            #expect(try await store.userFactor(username: "john", factor: "TOTP")?.version == 2)
            #expect(try await store.saveUserFactor(UserFactorRecord(username: "john", factor: "Other", data: "{}", enrolledAt: 6_000), expectedVersion: 0))
            #expect(try await store.saveUserFactor(UserFactorRecord(username: "jane", factor: "TOTP", data: "{}", enrolledAt: 6_000), expectedVersion: 0))
            #expect(try await store.userFactors(username: "john").map(\.factor) == ["Other", "TOTP"])
            #expect(try await store.deleteUserFactors(username: "john", factor: "TOTP") == 1)
            #expect(try await store.deleteUserFactors(username: "john", factor: nil) == 1)
            #expect(try await store.userFactors(username: "john").isEmpty)
            #expect(try await store.userFactors(username: "jane").count == 1)
        }
    }
}
