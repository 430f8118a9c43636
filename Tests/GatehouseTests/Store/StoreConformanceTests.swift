import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseStore
import Testing

/// What every `GatehouseStore` must do, run on each store: the same tests on SQLite and PostgreSQL.
@Suite(.timeLimit(.minutes(3))) struct StoreConformanceTests {
    static func registration(_ clientID: String, device: String = "device-1", at time: Int64 = 1_000) -> ClientRegistrationRecord {
        ClientRegistrationRecord(
            clientID: clientID,
            data: RegistrationData(
                device: DeviceData(id: device, hardware: "TestPhone", platform: "ios 18"),
                application: ApplicationData(id: "com.sample.pincodeswift", clientPlatform: "ios", version: "1.0"),
                attributes: ["sdk_protocol_version": 1]),
            publicKey: RSAPublicJWK(n: "AQAB-modulus", e: "AQAB"), createdAt: time, updatedAt: time)
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: Client assertions

    @Test(arguments: StoreKind.allCases)
    func anAssertionIsConsumedOnceUntilItExpires(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store async throws in
            #expect(try await store.consumeAssertion(digest: "d1", expiresAt: 2_000, now: 1_000) == true)
            #expect(try await store.consumeAssertion(digest: "d1", expiresAt: 2_000, now: 1_500) == false, "a replay is refused")
            #expect(try await store.consumeAssertion(digest: "d2", expiresAt: 2_000, now: 1_500) == true, "another assertion is not")
            // A record outlives its expiry by the sweep's margin (other nodes' clocks), then a later call drops it.
            let margin = UsedAssertionRecords.sweepMargin
            #expect(try await store.consumeAssertion(digest: "d3", expiresAt: 4_000 + margin, now: 2_000 + margin) == true)
            #expect(try await store.consumeAssertion(digest: "d1", expiresAt: 5_000 + margin, now: 2_000 + margin) == false,
                    "within the margin, the record still refuses")
            #expect(try await store.consumeAssertion(digest: "d4", expiresAt: 9_000 + margin, now: 2_001 + margin) == true)
            #expect(try await store.consumeAssertion(digest: "d1", expiresAt: 9_000 + margin, now: 2_001 + margin) == true,
                    "past it, an earlier call dropped the record")
        }
    }

    // MARK: Registrations

    @Test(arguments: StoreKind.allCases)
    func registrationsAreCreatedReadUpdatedAndNotDuplicated(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.registration(clientID: "c1") == nil)
            let record = Self.registration("c1")
            try await store.createRegistration(record)
            #expect(try await store.registration(clientID: "c1") == record)

            await #expect(throws: StoreError.duplicate) { try await store.createRegistration(Self.registration("c1", device: "other")) }
            #expect(try await store.registration(clientID: "c1") == record, "a refused duplicate changes nothing")

            var updated = Self.registration("c1", device: "device-2")
            updated.updatedAt = 2_000
            try await store.updateRegistration(updated)
            #expect(try await store.registration(clientID: "c1") == updated)

            await #expect(throws: StoreError.notFound) { try await store.updateRegistration(Self.registration("nobody")) }
            #expect(try await store.registration(clientID: "nobody") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentCreationsOfOneIDHaveExactlyOneWinner(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        do {
                            try await store.createRegistration(Self.registration("same", device: "device-\(index)"))
                            return true
                        } catch StoreError.duplicate {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
        }
    }

    // MARK: Client state

    @Test(arguments: StoreKind.allCases)
    func clientStateIsVersionedAndCompareAndSet(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.clientState(clientID: "c1").isEmpty)
            #expect(try await store.commit(clientID: "c1", writes: []), "nothing to write always succeeds")

            #expect(try await store.commit(clientID: "c1", writes: [
                StateWrite(name: "PinCodeAttempts", expectedVersion: 0, data: Self.bytes("{\"a\":1}")),
                StateWrite(name: "@client", expectedVersion: 0, data: Self.bytes("{}")),
            ]))
            var state = try await store.clientState(clientID: "c1")
            #expect(state == [
                "PinCodeAttempts": VersionedState(data: Self.bytes("{\"a\":1}"), version: 1),
                "@client": VersionedState(data: Self.bytes("{}"), version: 1),
            ])

            #expect(try await store.commit(clientID: "c1", writes: [StateWrite(name: "PinCodeAttempts", expectedVersion: 1, data: Self.bytes("{\"a\":2}"))]))
            state = try await store.clientState(clientID: "c1")
            #expect(state["PinCodeAttempts"] == VersionedState(data: Self.bytes("{\"a\":2}"), version: 2))
            #expect(state["@client"]?.version == 1)

            // Stale: the version read is no longer the stored one. Nothing is written.
            #expect(try await !store.commit(clientID: "c1", writes: [StateWrite(name: "PinCodeAttempts", expectedVersion: 1, data: Self.bytes("stale"))]))
            // "New" while it exists.
            #expect(try await !store.commit(clientID: "c1", writes: [StateWrite(name: "@client", expectedVersion: 0, data: Self.bytes("stale"))]))
            // Updating a piece that does not exist.
            #expect(try await !store.commit(clientID: "c1", writes: [StateWrite(name: "Missing", expectedVersion: 3, data: Self.bytes("x"))]))
            #expect(try await store.clientState(clientID: "c1") == state)

            // Other clients are separate.
            #expect(try await store.clientState(clientID: "c2").isEmpty)
            #expect(try await store.commit(clientID: "c2", writes: [StateWrite(name: "PinCodeAttempts", expectedVersion: 0, data: Self.bytes("c2"))]))
            #expect(try await store.clientState(clientID: "c1") == state)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aRegistrationAndItsStateAreReadTogether(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.storedClient(clientID: "c1") == nil)
            let record = Self.registration("c1")
            try await store.createRegistration(record)
            var read = try #require(try await store.storedClient(clientID: "c1"))
            #expect(read.registration == record && read.state.isEmpty)

            #expect(try await store.commit(clientID: "c1", writes: [
                StateWrite(name: "@client", expectedVersion: 0, data: Self.bytes("{}")),
                StateWrite(name: "PinCodeAttempts", expectedVersion: 0, data: Self.bytes(#"{"attempts":1}"#)),
            ]))
            try await store.createRegistration(Self.registration("c2"))
            #expect(try await store.commit(clientID: "c2", writes: [StateWrite(name: "other", expectedVersion: 0, data: Self.bytes("{}"))]))
            read = try #require(try await store.storedClient(clientID: "c1"))
            #expect(read.registration == record)
            #expect(read.state == (try await store.clientState(clientID: "c1")), "the same state as read alone, nothing of c2")
            #expect(read.state.count == 2)

            // A registration changed (by this node or any other) reads back changed: decoded records are reused
            // only for the very text stored.
            var updated = Self.registration("c1", device: "device-2")
            updated.updatedAt = 2_000
            try await store.updateRegistration(updated)
            #expect(try await store.storedClient(clientID: "c1")?.registration == updated)
            #expect(try await store.registration(clientID: "c1") == updated)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aBatchWithOneStaleWriteWritesNothing(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.commit(clientID: "c1", writes: [
                StateWrite(name: "A", expectedVersion: 0, data: Self.bytes("a1")),
                StateWrite(name: "B", expectedVersion: 0, data: Self.bytes("b1")),
            ]))
            let before = try await store.clientState(clientID: "c1")
            // The first writes are valid, the last is stale: all are rolled back.
            #expect(try await !store.commit(clientID: "c1", writes: [
                StateWrite(name: "A", expectedVersion: 1, data: Self.bytes("a2")),
                StateWrite(name: "C", expectedVersion: 0, data: Self.bytes("c1")),
                StateWrite(name: "B", expectedVersion: 7, data: Self.bytes("b2")),
            ]))
            #expect(try await store.clientState(clientID: "c1") == before)
            // A new piece in a batch whose other piece is stale.
            #expect(try await !store.commit(clientID: "c1", writes: [
                StateWrite(name: "D", expectedVersion: 0, data: Self.bytes("d1")),
                StateWrite(name: "A", expectedVersion: 0, data: Self.bytes("a-again")),
            ]))
            #expect(try await store.clientState(clientID: "c1") == before)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func ofConcurrentCommitsOnOneVersionExactlyOneWins(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.commit(clientID: "c1", writes: [
                StateWrite(name: "check", expectedVersion: 0, data: Self.bytes("0")),
                StateWrite(name: "@client", expectedVersion: 0, data: Self.bytes("0")),
            ]))
            // 30 rounds read version 1 and write both pieces; then 30 first writes of a new piece.
            let winners = try await withThrowingTaskGroup(of: Int?.self) { group in
                for index in 0..<30 {
                    group.addTask {
                        try await store.commit(clientID: "c1", writes: [
                            StateWrite(name: "check", expectedVersion: 1, data: Self.bytes("\(index)")),
                            StateWrite(name: "@client", expectedVersion: 1, data: Self.bytes("\(index)")),
                        ]) ? index : nil
                    }
                }
                return try await group.reduce(into: [Int]()) { if let index = $1 { $0.append(index) } }
            }
            #expect(winners.count == 1)
            let state = try await store.clientState(clientID: "c1")
            let winner = try #require(winners.first)
            #expect(state["check"] == VersionedState(data: Self.bytes("\(winner)"), version: 2))
            #expect(state["@client"] == VersionedState(data: Self.bytes("\(winner)"), version: 2), "both pieces come from the same round")

            let firsts = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<30 {
                    group.addTask { try await store.commit(clientID: "c1", writes: [StateWrite(name: "new", expectedVersion: 0, data: Self.bytes("\(index)"))]) }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(firsts.filter { $0 }.count == 1)
            #expect(try await store.clientState(clientID: "c1")["new"]?.version == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aCounterIncrementedByRetryingRoundsLosesNoUpdate(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            // 40 concurrent read-modify-write rounds that retry on conflict, like AuthorizationService.withClient.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        while true {
                            let stored = try await store.clientState(clientID: "c1")["counter"]
                            let value = stored.map { Int(String(decoding: $0.data, as: UTF8.self))! } ?? 0
                            let write = StateWrite(name: "counter", expectedVersion: stored?.version ?? 0, data: Self.bytes("\(value + 1)"))
                            if try await store.commit(clientID: "c1", writes: [write]) { return }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let counter = try #require(try await store.clientState(clientID: "c1")["counter"])
            #expect(String(decoding: counter.data, as: UTF8.self) == "40")
            #expect(counter.version == 40)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func binaryStateIsKeptByteForByte(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            let data = [UInt8](0...255) + [0, 0, 255]
            let stored = try await store.commit(clientID: "c1", writes: [StateWrite(name: "bin", expectedVersion: 0, data: data)])
            #expect(stored)
            #expect(try await store.clientState(clientID: "c1")["bin"]?.data == data)
            #expect(try await store.commit(clientID: "c1", writes: [StateWrite(name: "bin", expectedVersion: 1, data: [])]))
            #expect(try await store.clientState(clientID: "c1")["bin"] == VersionedState(data: [], version: 2))
        }
    }

    // MARK: Codes

    static func code(_ hash: String, expiresAt: Int64 = Int64(Date().timeIntervalSince1970 * 1000) + 120_000) -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(
            codeHash: hash, clientID: "c1", scope: "accessRestricted", redirectURI: "https://mfpredirecturi", expiresAt: expiresAt,
            tokenExpiresAt: expiresAt + 3_600_000, checks: ["PinCodeAttempts"], userID: nil)
    }

    @Test(arguments: StoreKind.allCases)
    func aCodeIsConsumedOnce(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            let code = Self.code("hash-1")
            try await store.insertCode(code)
            try await store.insertCode(Self.code("hash-2"))
            await #expect(throws: StoreError.duplicate, "a code hash is stored once") { try await store.insertCode(Self.code("hash-1")) }
            #expect(try await store.consumeCode(hash: "unknown") == nil)
            #expect(try await store.consumeCode(hash: "hash-1") == code)
            #expect(try await store.consumeCode(hash: "hash-1") == nil)
            #expect(try await store.consumeCode(hash: "hash-2")?.codeHash == "hash-2")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func ofConcurrentConsumersOfOneCodeExactlyOneGetsIt(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            for round in 0..<5 {
                try await store.insertCode(Self.code("race-\(round)"))
                let winners = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<25 {
                        group.addTask { try await store.consumeCode(hash: "race-\(round)") != nil }
                    }
                    return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
                }
                #expect(winners == 1, "round \(round)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func codesLongExpiredAreCleanedUpOnInsert(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try await store.insertCode(Self.code("ancient", expiresAt: now - 2 * 3_600_000))
            try await store.insertCode(Self.code("recent", expiresAt: now - 60_000))
            try await store.insertCode(Self.code("fresh", expiresAt: now + 120_000))
            #expect(try await store.consumeCode(hash: "ancient") == nil)
            // An expired code is still returned: the service refuses it by its expiry.
            #expect(try await store.consumeCode(hash: "recent") != nil)
            #expect(try await store.consumeCode(hash: "fresh") != nil)
        }
    }

    // MARK: Keys

    @Test(arguments: StoreKind.allCases)
    func signingKeysAreKeptOldestFirst(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.signingKeys().isEmpty)
            let second = SigningKeyRecord(kid: "k2", algorithm: "ES256", privateKeyPEM: "pem-2", createdAt: 2_000)
            let first = SigningKeyRecord(kid: "k1", algorithm: "ES256", privateKeyPEM: "pem-1", createdAt: 1_000)
            let tie = SigningKeyRecord(kid: "k0", algorithm: "ES256", privateKeyPEM: "pem-0", createdAt: 2_000)
            try await store.insertSigningKey(second)
            try await store.insertSigningKey(first)
            try await store.insertSigningKey(tie)
            #expect(try await store.signingKeys() == [first, tie, second])
            await #expect(throws: StoreError.duplicate, "a kid is never reused") {
                try await store.insertSigningKey(SigningKeyRecord(kid: "k1", algorithm: "ES256", privateKeyPEM: "other", createdAt: 3_000))
            }
            #expect(try await store.signingKeys() == [first, tie, second])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func onlyOneFirstSigningKeyWinsARace(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            let candidates = (0..<8).map { SigningKeyRecord(kid: "first-\($0)", algorithm: "ES256", privateKeyPEM: "pem-\($0)", createdAt: 1_000) }
            let won = try await withThrowingTaskGroup(of: Bool.self) { group in
                for candidate in candidates { group.addTask { try await store.insertFirstSigningKey(candidate) } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(won == 1)
            let keys = try await store.signingKeys()
            #expect(keys.count == 1 && candidates.contains(keys[0]))
            #expect(try await store.insertFirstSigningKey(SigningKeyRecord(kid: "late", algorithm: "ES256", privateKeyPEM: "p", createdAt: 2_000)) == false)
            #expect(try await store.signingKeys() == keys)
        }
    }

    // MARK: Users

    @Test(arguments: StoreKind.allCases)
    func usersAreUpserted(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.user(named: "john") == nil)
            let john = UserRecord(username: "john", displayName: "John Doe", passwordHash: "$2b$04$hash", attributes: ["country": "DE"])
            try await store.upsertUser(john)
            #expect(try await store.user(named: "john") == john)
            let renamed = UserRecord(username: "john", displayName: "John D.", passwordHash: "$2b$04$other")
            try await store.upsertUser(renamed)
            #expect(try await store.user(named: "john") == renamed)
            #expect(try await store.user(named: "John") == nil, "names are case-sensitive")
        }
    }

    // MARK: Revocations

    @Test(arguments: StoreKind.allCases)
    func revocationsAreReadSinceATimeOldestFirst(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.revocations(since: 0).isEmpty)
            let a = RevocationRecord(subject: .grant(clientID: "c1", check: "PinCodeAttempts"), revokedAt: 1_000)
            let b = RevocationRecord(subject: .token(jti: "jti-1"), revokedAt: 3_000)
            let c = RevocationRecord(subject: .grant(clientID: "c2", check: "UserLogin"), revokedAt: 2_000)
            let d = RevocationRecord(subject: .token(jti: "jti-2"), revokedAt: 2_000)
            for record in [a, b, c, d] { try await store.insertRevocation(record) }
            #expect(try await store.revocations(since: 0) == [a, c, d, b])
            #expect(try await store.revocations(since: 2_000) == [c, d, b], "since is inclusive")
            #expect(try await store.revocations(since: 2_001) == [b])
            #expect(try await store.revocations(since: 3_001).isEmpty)
            // The same revocation twice is kept twice (harmless) and read back.
            try await store.insertRevocation(a)
            #expect(try await store.revocations(since: 0).count == 5)
        }
    }
}
