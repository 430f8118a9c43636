import Foundation
import GRDB
import GatehouseChecks
import GatehouseProtocol
public import GatehouseStore

/// Client registrations and their check states: a round's reads and commits.
extension SQLiteStore {
    // MARK: Registrations

    public func createRegistration(_ registration: ClientRegistrationRecord) async throws {
        let text = try encode(registration)
        try await writing { db in
            do {
                try db.cachedStatement(sql: "INSERT INTO registrations (client_id, record, application_id, device_id, device_name) VALUES (?, ?, ?, ?, ?)")
                    .execute(arguments: [registration.clientID, text, registration.data.application.id, registration.data.device.id,
                                         registration.data.device.deviceDisplayName])
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw StoreError.duplicate
            }
        }
        decodedRegistrations.remember(registration, as: text)
    }

    public func updateRegistration(_ registration: ClientRegistrationRecord) async throws {
        let text = try encode(registration)
        try await writing { db in
            try db.execute(
                sql: "UPDATE registrations SET record = ?, application_id = ?, device_id = ?, device_name = ? WHERE client_id = ?",
                arguments: [text, registration.data.application.id, registration.data.device.id, registration.data.device.deviceDisplayName,
                            registration.clientID])
            if db.changesCount == 0 { throw StoreError.notFound }
        }
    }

    public func registration(clientID: String) async throws -> ClientRegistrationRecord? {
        let text = try await readingWithWrites { db in try Self.registrationText(db, clientID) }
        return try text.map { try decodedRegistrations.record($0, clientID: clientID) }
    }

    private static func registrationText(_ db: Database, _ clientID: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT record FROM registrations WHERE client_id = ?"), arguments: [clientID])
    }

    private static func states(_ db: Database, _ clientID: String) throws -> [String: VersionedState] {
        var result: [String: VersionedState] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT name, data, version FROM client_states WHERE client_id = ?"), arguments: [clientID])
        while let row = try rows.next() {
            let data: Data = row["data"]
            result[row["name"]] = VersionedState(data: [UInt8](data), version: row["version"])
        }
        return result
    }

    public func storedClient(clientID: String) async throws -> StoredClient? {
        // One statement (a consistent snapshot without a transaction): the registration with each of its states and
        // its device's hold.
        let read = try await readingWithWrites { db -> (String, [String: VersionedState], String?)? in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT r.record, s.name, s.data, s.version, d.record FROM registrations r
                LEFT JOIN client_states s ON s.client_id = r.client_id
                LEFT JOIN device_access d ON d.device_id = r.device_id WHERE r.client_id = ?
                """), arguments: [clientID])
            var text: String?
            var device: String?
            var states: [String: VersionedState] = [:]
            while let row = try rows.next() {
                if text == nil {
                    text = row[0]
                    device = row[4]
                }
                if let name: String = row[1] {
                    let data: Data = row[2]
                    states[name] = VersionedState(data: [UInt8](data), version: row[3])
                }
            }
            return text.map { ($0, states, device) }
        }
        guard let (text, state, device) = read else { return nil }
        return StoredClient(registration: try decodedRegistrations.record(text, clientID: clientID), state: state,
                            device: try device.map { try decode(DeviceAccessRecord.self, $0) })
    }

    // MARK: Client state

    public func clientState(clientID: String) async throws -> [String: VersionedState] {
        try await readingWithWrites { db in try Self.states(db, clientID) }
    }

    public func commit(clientID: String, writes: [StateWrite]) async throws -> Bool {
        guard !writes.isEmpty else { return true }
        do {
            try await writing { db in
                for write in writes {
                    if write.expectedVersion == 0 {
                        try db.cachedStatement(sql: "INSERT OR IGNORE INTO client_states (client_id, name, data, version) VALUES (?, ?, ?, 1)")
                            .execute(arguments: [clientID, write.name, Data(write.data)])
                    } else {
                        try db.cachedStatement(
                            sql: "UPDATE client_states SET data = ?, version = version + 1 WHERE client_id = ? AND name = ? AND version = ?")
                            .execute(arguments: [Data(write.data), clientID, write.name, write.expectedVersion])
                    }
                    // Another round wrote first: this one's writes are rolled back, all of them.
                    if db.changesCount != 1 { throw StaleVersion() }
                }
            }
            return true
        } catch is StaleVersion {
            return false
        }
    }

    /// A state's version was not the one a round read.
    private struct StaleVersion: Error {}
}
