public import GatehouseProtocol

/// Which registrations an operator asks for: filters (all optional, exact match) and a page.
///
/// Pages are ordered by client id; `after` is the last client id of the previous page (a stable cursor: a
/// registration created or deleted meanwhile never makes a page skip or repeat another).
public struct RegistrationQuery: Sendable, Equatable {
    public var applicationID: String?
    public var deviceID: String?
    /// The device's display name as its client registered it (`setDeviceDisplayName`).
    public var deviceDisplayName: String?
    /// The client's active user (the user its last login authenticated).
    public var userID: String?
    /// Only client ids greater than this one.
    public var after: String?
    /// At most this many.
    public var limit: Int

    public init(applicationID: String? = nil, deviceID: String? = nil, deviceDisplayName: String? = nil, userID: String? = nil,
                after: String? = nil, limit: Int = 100) {
        self.applicationID = applicationID
        self.deviceID = deviceID
        self.deviceDisplayName = deviceDisplayName
        self.userID = userID
        self.after = after
        self.limit = limit
    }
}

/// A registration as an operator lists it: the record and the client's active user.
public struct RegistrationListing: Sendable, Equatable {
    public var registration: ClientRegistrationRecord
    public var userID: String?

    public init(registration: ClientRegistrationRecord, userID: String?) {
        self.registration = registration
        self.userID = userID
    }
}

/// An operator's hold on one device (MobileFirst's device status and per-application blocking): stored only while it
/// blocks something — a device without a record is active with nothing blocked.
public struct DeviceAccessRecord: Codable, Sendable, Equatable {
    public var deviceID: String
    public var status: DeviceStatus
    /// Applications (by id, every platform) refused on this device alone, whatever its status; sorted.
    public var blockedApplications: [String]
    /// Epoch milliseconds of the last change.
    public var updatedAt: Int64

    public init(deviceID: String, status: DeviceStatus = .active, blockedApplications: [String] = [], updatedAt: Int64) {
        self.deviceID = deviceID
        self.status = status
        self.blockedApplications = Array(Set(blockedApplications)).sorted()
        self.updatedAt = updatedAt
    }

    /// Whether the record blocks anything (one that does not need not be stored).
    public var blocksAnything: Bool { status != .active || !blockedApplications.isEmpty }

    /// Whether `application` may obtain tokens on this device.
    public func allows(application: String) -> Bool {
        status == .active && !blockedApplications.contains(application)
    }
}

/// A client as one pre-authorization round reads it, in one store read: its registration, every stored piece of its
/// state, and the operator's hold on its device (`nil`: none).
public struct StoredClient: Sendable, Equatable {
    public var registration: ClientRegistrationRecord
    public var state: [String: VersionedState]
    public var device: DeviceAccessRecord?

    public init(registration: ClientRegistrationRecord, state: [String: VersionedState], device: DeviceAccessRecord?) {
        self.registration = registration
        self.state = state
        self.device = device
    }
}

/// How many registrations an application version has: what an operator looks at before notifying or disabling it.
public struct ApplicationVersionCount: Sendable, Equatable {
    public var application: String
    public var platform: String
    /// `nil` for registrations without a version (web apps).
    public var version: String?
    public var registrations: Int

    public init(application: String, platform: String, version: String?, registrations: Int) {
        self.application = application
        self.platform = platform
        self.version = version
        self.registrations = registrations
    }
}

/// One entry of the audit log: what happened, when, to whom and where. Never a secret, a token or a code.
public struct AuditEvent: Codable, Sendable, Equatable {
    /// Assigned by the store, increasing: the order of the log and the cursor of its pages (0 before stored).
    public var id: Int64
    /// Epoch milliseconds.
    public var time: Int64
    /// What happened: `registration`, `check.success`, `check.failure`, `check.blocked`, `token.issued`,
    /// `token.revoked`, `account.locked`, `admin.<action>`.
    public var event: String
    public var clientID: String?
    public var application: String?
    public var user: String?
    /// The security check, for check outcomes and check resets.
    public var check: String?
    /// The source address of the request.
    public var address: String?
    /// The node that recorded the event.
    public var node: String?
    /// The confidential client that acted (admin actions, client-credentials tokens).
    public var actor: String?
    /// A short, secret-free detail (a scope, a key id, an account).
    public var detail: String?

    public init(id: Int64 = 0, time: Int64, event: String, clientID: String? = nil, application: String? = nil, user: String? = nil,
                check: String? = nil, address: String? = nil, node: String? = nil, actor: String? = nil, detail: String? = nil) {
        self.id = id
        self.time = time
        self.event = event
        self.clientID = clientID
        self.application = application
        self.user = user
        self.check = check
        self.address = address
        self.node = node
        self.actor = actor
        self.detail = detail
    }
}
