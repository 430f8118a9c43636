/// A device's status as MobileFirst's mobile-application management names it: `ACTIVE` (not blocked), `LOST`,
/// `STOLEN` or `DISABLED` (every application on the device is refused protected resources until set `ACTIVE` again).
/// Shown in introspection (`mfp-device.status`) and set by operators (`PUT /admin/v1/devices/{id}`).
public enum DeviceStatus: String, Codable, Sendable, CaseIterable {
    case active = "ACTIVE"
    case lost = "LOST"
    case stolen = "STOLEN"
    case disabled = "DISABLED"

    /// The status written in any letter case (`lost`, `Lost`).
    public init?(caseInsensitive text: String) {
        self.init(rawValue: text.uppercased())
    }
}

/// A refused device on the wire: pre-authorization answers 403 with a failure under ``failureName`` —
/// `{"failures":{"gatehouse_deviceAccess":{"failure":"…","status":"LOST"}}}` (with `"application":"<id>"` when only the
/// application is blocked on the device) — which MobileFirst SDKs hand to a challenge handler registered under that
/// name, or else to the request's failure callback. MobileFirst documents the blocking, not its wire form; this is
/// Gatehouse's, in the shape of every other check failure.
public enum DeviceAccessWire {
    /// The name the failure is filed under (never a check of the policy: names starting `gatehouse_` are reserved).
    public static let failureName = "gatehouse_deviceAccess"
    public static let failure = "failure"
    public static let status = "status"
    public static let application = "application"
}
