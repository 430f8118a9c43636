import Foundation
import GRDB
public import GatehouseStore

extension SQLiteStore {
    // MARK: Registrations for operators

    public func registrations(_ query: RegistrationQuery) async throws -> [RegistrationListing] {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let application = query.applicationID { conditions.append("application_id = ?"); arguments += [application] }
        if let device = query.deviceID { conditions.append("device_id = ?"); arguments += [device] }
        if let name = query.deviceDisplayName { conditions.append("device_name = ?"); arguments += [name] }
        if let user = query.userID { conditions.append("user_id = ?"); arguments += [user] }
        if let after = query.after { conditions.append("client_id > ?"); arguments += [after] }
        arguments += [max(query.limit, 0)]
        let sql = "SELECT record, user_id FROM registrations"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY client_id LIMIT ?"
        let rows = try await reading { [arguments] db -> [(String, String?)] in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { ($0["record"], $0["user_id"]) }
        }
        return try rows.map { RegistrationListing(registration: try decode(ClientRegistrationRecord.self, $0.0), userID: $0.1) }
    }

    public func applicationVersions(limit: Int) async throws -> [ApplicationVersionCount] {
        try await reading { db in
            try Row.fetchAll(db, sql: """
                SELECT application_id, json_extract(record, '$.data.application.clientPlatform') AS platform,
                       json_extract(record, '$.data.application.version') AS version, COUNT(*) AS registrations
                FROM registrations GROUP BY 1, 2, 3 ORDER BY 1, 2, 3 LIMIT ?
                """, arguments: [max(limit, 0)]).map {
                ApplicationVersionCount(application: $0["application_id"], platform: $0["platform"] ?? "", version: $0["version"],
                                        registrations: $0["registrations"])
            }
        }
    }

    public func setActiveUser(clientID: String, userID: String?) async throws {
        try await writing { db in
            try db.execute(sql: "UPDATE registrations SET user_id = ? WHERE client_id = ?", arguments: [userID, clientID])
        }
    }

    public func deleteRegistration(clientID: String) async throws -> Bool {
        try await writing { db in
            try db.execute(sql: "DELETE FROM client_states WHERE client_id = ?", arguments: [clientID])
            try db.execute(sql: "DELETE FROM registrations WHERE client_id = ?", arguments: [clientID])
            return db.changesCount > 0
        }
    }

    // MARK: Devices

    public func deviceAccess(deviceIDs: [String]) async throws -> [DeviceAccessRecord] {
        guard !deviceIDs.isEmpty else { return [] }
        let texts = try await reading { db in
            try String.fetchAll(db, sql: "SELECT record FROM device_access WHERE device_id IN (\(databaseQuestionMarks(count: deviceIDs.count)))",
                                arguments: StatementArguments(deviceIDs))
        }
        return try texts.map { try decode(DeviceAccessRecord.self, $0) }
    }

    public func saveDeviceAccess(_ record: DeviceAccessRecord) async throws {
        let text = try encode(record)
        try await writing { db in
            if record.blocksAnything {
                try db.execute(sql: "INSERT OR REPLACE INTO device_access (device_id, record) VALUES (?, ?)", arguments: [record.deviceID, text])
            } else {
                try db.execute(sql: "DELETE FROM device_access WHERE device_id = ?", arguments: [record.deviceID])
            }
        }
    }

    public func deleteDevice(deviceID: String) async throws -> [String] {
        try await writing { db in
            let clients = try String.fetchAll(db, sql: "SELECT client_id FROM registrations WHERE device_id = ?", arguments: [deviceID])
            try db.execute(sql: "DELETE FROM client_states WHERE client_id IN (SELECT client_id FROM registrations WHERE device_id = ?)",
                           arguments: [deviceID])
            try db.execute(sql: "DELETE FROM registrations WHERE device_id = ?", arguments: [deviceID])
            try db.execute(sql: "DELETE FROM device_access WHERE device_id = ?", arguments: [deviceID])
            return clients
        }
    }

    // MARK: Audit log

    public func appendAudit(_ events: [AuditEvent]) async throws {
        guard !events.isEmpty else { return }
        let texts = try events.map { ($0.time, try encode($0)) }
        try await writing { db in
            for (time, text) in texts {
                try db.cachedStatement(sql: "INSERT INTO audit_events (time, record) VALUES (?, ?)").execute(arguments: [time, text])
            }
        }
    }

    public func auditEvents(after: Int64, limit: Int) async throws -> [AuditEvent] {
        let rows = try await reading { db -> [(Int64, String)] in
            try Row.fetchAll(db, sql: "SELECT id, record FROM audit_events WHERE id > ? ORDER BY id LIMIT ?",
                             arguments: [after, max(limit, 0)]).map { ($0["id"], $0["record"]) }
        }
        return try rows.map { id, text in
            var event = try decode(AuditEvent.self, text)
            event.id = id
            return event
        }
    }

    @discardableResult
    public func deleteAudit(before time: Int64) async throws -> Int {
        try await writing { db in
            try db.execute(sql: "DELETE FROM audit_events WHERE time < ?", arguments: [time])
            return db.changesCount
        }
    }
}
