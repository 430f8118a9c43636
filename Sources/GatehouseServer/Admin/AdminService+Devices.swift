import Foundation
import GatehouseProtocol
import GatehouseStore

/// Device management for operators (`/admin/v1/devices`), as MobileFirst's console has it: devices found by id,
/// display name, user or application, each with its registrations (one per application installed on it), its status
/// (`ACTIVE`, `LOST`, `STOLEN`, `DISABLED`) and the applications blocked on it alone; a status or block set at once
/// on every node (the next pre-authorization round reads it with the client, and the tokens it refuses are revoked);
/// a device unregistered with everything stored of it. Every change is audited.
extension AdminService {
    /// A page of devices: the devices of the registrations matching the query (`device`, `displayName`, `user`,
    /// `application`), in the order of their first registration by client id; `next` is the registrations' cursor.
    /// `query.limit` is the page's size.
    func devices(_ query: RegistrationQuery) async throws -> JSON {
        let (page, next) = try await registrationPage(query)
        var result: JSONObject = ["devices": .array(try await Self.devices(of: page, holds: store))]
        if let next { result["next"] = .string(next) }
        return .object(result)
    }

    /// One device with every registration it has (`404` when it has none and no hold).
    func device(_ deviceID: String) async throws -> JSON {
        let (registrations, hold) = try await known(deviceID)
        return Self.device(deviceID, registrations: registrations, hold: hold)
    }

    /// A device's registrations (the first ``maxPage``) and hold; `404` when it has neither.
    private func known(_ deviceID: String) async throws -> (registrations: [RegistrationListing], hold: DeviceAccessRecord?) {
        let registrations = try await store.registrations(RegistrationQuery(deviceID: deviceID, limit: Self.maxPage))
        let hold = try await store.deviceAccess(deviceIDs: [deviceID]).first
        guard !registrations.isEmpty || hold != nil else {
            throw AdminError.notFound("No device has id '\(deviceID.prefix(64))'.")
        }
        return (registrations, hold)
    }

    /// `PUT /admin/v1/devices/{id}` with `{"status": "LOST", "blockedApplications": ["com.example"]}` (either member;
    /// the one left out is kept): the device's hold replaced. The tokens of every client it now refuses are revoked.
    func setDevice(_ deviceID: String, body: JSON, actor: String, address: String?) async throws -> JSON {
        guard case .object(let members) = body, !members.isEmpty,
              Set(members.keys).isSubset(of: ["status", "blockedApplications"]) else {
            throw AdminError.invalidRequest("The body must be {\"status\": \"ACTIVE|LOST|STOLEN|DISABLED\", \"blockedApplications\": [\"<application id>\"]}.")
        }
        let (registrations, before) = try await known(deviceID)
        var hold = before ?? DeviceAccessRecord(deviceID: deviceID, updatedAt: 0)
        if let status = members["status"] {
            guard let text = status.stringValue, let value = DeviceStatus(caseInsensitive: text) else {
                throw AdminError.invalidRequest("status must be one of \(DeviceStatus.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            hold.status = value
        }
        if let blocked = members["blockedApplications"] {
            guard case .array(let items) = blocked, items.count <= 1000,
                  let ids = Optional(items.compactMap(\.stringValue)), ids.count == items.count, ids.allSatisfy({ !$0.isEmpty && $0.count <= 256 })
            else {
                throw AdminError.invalidRequest("blockedApplications must be an array of application ids (at most 1000).")
            }
            hold.blockedApplications = Array(Set(ids)).sorted()
        }
        hold.updatedAt = EpochTime.nowMillis()
        try await store.saveDeviceAccess(hold)
        // Refused from now on: their tokens stop holding everywhere (the revocation list), and this node's
        // introspection forgets what it remembered of them.
        for listing in registrations {
            let record = listing.registration
            let refusedNow = DeviceRefusal(hold, application: record.data.application.id) != nil
            if refusedNow, DeviceRefusal(before, application: record.data.application.id) == nil {
                try await revokeGrants(of: record)
            }
            service.introspectedClients.forget(record.clientID)
        }
        let detail = "\(hold.status.rawValue)" + (hold.blockedApplications.isEmpty ? "" : "; blocked: " + hold.blockedApplications.joined(separator: ", "))
        service.audit.record("admin.device.update", address: address, actor: actor, detail: "device \(deviceID.prefix(64)): \(detail.prefix(512))")
        return Self.device(deviceID, registrations: registrations, hold: hold.blocksAnything ? hold : nil)
    }

    /// `DELETE /admin/v1/devices/{id}`: the device unregistered — every registration of it deleted with its state, its
    /// tokens revoked first, its hold removed. Its applications must register again.
    func deleteDevice(_ deviceID: String, actor: String, address: String?) async throws -> [String] {
        let (registrations, _) = try await known(deviceID)
        for listing in registrations { try await revokeGrants(of: listing.registration) }
        let deleted = try await store.deleteDevice(deviceID: deviceID)
        for clientID in deleted { service.introspectedClients.forget(clientID) }
        service.audit.record("admin.device.delete", address: address, actor: actor,
                             detail: "device \(deviceID.prefix(64)): \(deleted.count) registration(s)")
        return deleted
    }

    // MARK: Views

    /// The devices of `listings`, in the order they first appear, each with its hold read in one store call.
    static func devices(of listings: [RegistrationListing], holds store: any GatehouseStore) async throws -> [JSON] {
        var order: [String] = []
        var byDevice: [String: [RegistrationListing]] = [:]
        for listing in listings {
            let id = listing.registration.data.device.id
            if byDevice[id] == nil { order.append(id) }
            byDevice[id, default: []].append(listing)
        }
        let holds = Dictionary(try await store.deviceAccess(deviceIDs: order).map { ($0.deviceID, $0) }) { first, _ in first }
        return order.map { device($0, registrations: byDevice[$0] ?? [], hold: holds[$0]) }
    }

    /// A device as the admin API shows it: `{"id","displayName","status","blockedApplications","users","registrations"}`.
    static func device(_ deviceID: String, registrations: [RegistrationListing], hold: DeviceAccessRecord?) -> JSON {
        // The latest registration's name and hardware: what the device said of itself last.
        let latest = registrations.max { $0.registration.updatedAt < $1.registration.updatedAt }?.registration.data.device
        let users = Array(Set(registrations.compactMap(\.userID))).sorted()
        return [
            "id": .string(deviceID),
            "displayName": JSON(latest?.deviceDisplayName), "hardware": JSON(latest?.hardware), "platform": JSON(latest?.platform),
            "status": .string((hold?.status ?? .active).rawValue),
            "blockedApplications": .array((hold?.blockedApplications ?? []).map { .string($0) }),
            "users": .array(users.map { .string($0) }),
            "registrations": .array(registrations.map { listing in
                let record = listing.registration
                let app = record.data.application
                return [
                    "clientId": .string(record.clientID),
                    "application": ["id": .string(app.id), "clientPlatform": .string(app.clientPlatform), "version": JSON(app.version)],
                    "user": JSON(listing.userID), "blocked": .bool(DeviceRefusal(hold, application: app.id) != nil),
                    "updatedAt": .int(record.updatedAt),
                ]
            }),
        ]
    }
}
