public import GatehouseStore
import PostgresNIO

extension PostgresStore {
    // MARK: Registrations for operators

    public func registrations(_ query: RegistrationQuery) async throws -> [RegistrationListing] {
        var conditions: [String] = []
        var binds = PostgresBindings()
        func condition(_ column: String, _ op: String, _ value: String?) {
            guard let value else { return }
            binds.append(value)
            conditions.append("\(column) \(op) $\(binds.count)")
        }
        condition("application_id", "=", query.applicationID)
        condition("device_id", "=", query.deviceID)
        condition("device_name", "=", query.deviceDisplayName)
        condition("user_id", "=", query.userID)
        condition("client_id COLLATE \"C\"", ">", query.after)
        binds.append(Int64(max(query.limit, 0)))
        let sql = "SELECT record, user_id FROM registrations"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY client_id COLLATE \"C\" LIMIT $\(binds.count)"
        var result: [RegistrationListing] = []
        let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        for try await (text, user) in rows.decode((String, String?).self) {
            result.append(RegistrationListing(registration: try decode(ClientRegistrationRecord.self, text), userID: user))
        }
        return result
    }

    public func applicationVersions(limit: Int) async throws -> [ApplicationVersionCount] {
        let sql = """
            SELECT application_id, (record::jsonb)->'data'->'application'->>'clientPlatform',
                   (record::jsonb)->'data'->'application'->>'version', COUNT(*)
            FROM registrations GROUP BY 1, 2, 3
            ORDER BY application_id COLLATE "C", ((record::jsonb)->'data'->'application'->>'clientPlatform') COLLATE "C",
                     ((record::jsonb)->'data'->'application'->>'version') COLLATE "C" NULLS FIRST
            LIMIT \(Int64(max(limit, 0)))
            """
        var result: [ApplicationVersionCount] = []
        let rows = try await client.query(PostgresQuery(stringLiteral: sql), logger: logger)
        for try await (application, platform, version, count) in rows.decode((String, String?, String?, Int64).self) {
            result.append(ApplicationVersionCount(application: application, platform: platform ?? "", version: version, registrations: Int(count)))
        }
        return result
    }

    public func setActiveUser(clientID: String, userID: String?) async throws {
        try await written("UPDATE registrations SET user_id = \(userID) WHERE client_id = \(clientID)")
    }

    public func deleteRegistration(clientID: String) async throws -> Bool {
        let logger = self.logger
        return try await committed { connection in
            try await connection.query("DELETE FROM client_states WHERE client_id = \(clientID)", logger: logger).collect()
            return try await !connection.query(
                "DELETE FROM registrations WHERE client_id = \(clientID) RETURNING client_id", logger: logger).collect().isEmpty
        }
    }

    // MARK: Devices

    public func deviceAccess(deviceIDs: [String]) async throws -> [DeviceAccessRecord] {
        guard !deviceIDs.isEmpty else { return [] }
        let rows = try await client.query("SELECT record FROM device_access WHERE device_id = ANY(\(deviceIDs))", logger: logger)
        var result: [DeviceAccessRecord] = []
        for try await text in rows.decode(String.self) { result.append(try decode(DeviceAccessRecord.self, text)) }
        return result
    }

    public func saveDeviceAccess(_ record: DeviceAccessRecord) async throws {
        if record.blocksAnything {
            let text = try encode(record)
            try await written("""
                INSERT INTO device_access (device_id, record) VALUES (\(record.deviceID), \(text))
                ON CONFLICT (device_id) DO UPDATE SET record = EXCLUDED.record
                """)
        } else {
            try await written("DELETE FROM device_access WHERE device_id = \(record.deviceID)")
        }
    }

    public func deleteDevice(deviceID: String) async throws -> [String] {
        // One statement: the device's states, registrations and hold go together.
        try await writtenTexts("""
            WITH clients AS (DELETE FROM registrations WHERE device_id = \(deviceID) RETURNING client_id),
                 states AS (DELETE FROM client_states WHERE client_id IN (SELECT client_id FROM clients)),
                 access AS (DELETE FROM device_access WHERE device_id = \(deviceID))
            SELECT client_id FROM clients
            """)
    }

    // MARK: Audit log

    public func appendAudit(_ events: [AuditEvent]) async throws {
        guard !events.isEmpty else { return }
        // One statement, one round trip: all the events or none, in order.
        _ = try await written(PreparedStatements.AppendAudit(times: events.map(\.time), records: try events.map { try encode($0) }))
    }

    public func auditEvents(after: Int64, limit: Int) async throws -> [AuditEvent] {
        var result: [AuditEvent] = []
        let rows = try await client.query(
            "SELECT id, record FROM audit_events WHERE id > \(after) ORDER BY id LIMIT \(Int64(max(limit, 0)))", logger: logger)
        for try await (id, text) in rows.decode((Int64, String).self) {
            var event = try decode(AuditEvent.self, text)
            event.id = id
            result.append(event)
        }
        return result
    }

    @discardableResult
    public func deleteAudit(before time: Int64) async throws -> Int {
        try await written("DELETE FROM audit_events WHERE time < \(time) RETURNING id").count
    }
}
