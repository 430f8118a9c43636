import GatehouseProtocol
import GatehouseStore

/// Why a client gets no token: an operator set its device `LOST`, `STOLEN` or `DISABLED`, or blocked its application
/// on that device alone (MobileFirst's access blocking). Thrown by ``AuthorizationService/withRegisteredClient(_:_:)``
/// before any check runs; pre-authorization answers it as the failure ``DeviceAccessWire`` describes, the
/// authorization endpoint as 403 `DEVICE_BLOCKED`, and introspection answers the client's tokens inactive.
struct DeviceRefusal: Error, Sendable {
    /// The device's status (`ACTIVE` when only the application is blocked on it).
    let status: DeviceStatus
    /// The application blocked on the device alone, if that is the reason.
    let application: String?

    /// The refusal `device` makes of `application`; `nil` when it allows it (no hold, or one on other applications).
    init?(_ device: DeviceAccessRecord?, application: String) {
        guard let device, !device.allows(application: application) else { return nil }
        status = device.status
        self.application = device.status == .active ? application : nil
    }

    /// What the client is told, in words and as the failure's members.
    var message: String {
        if let application { return "Application \(application.prefix(128)) is blocked on this device by an administrator." }
        return "This device is \(status.rawValue.lowercased()): an administrator blocked its access."
    }

    /// The pre-authorization failure: `{"failure": message, "status": …[, "application": …]}`.
    var failure: JSONObject {
        var failure: JSONObject = [DeviceAccessWire.failure: .string(message), DeviceAccessWire.status: .string(status.rawValue)]
        if let application { failure[DeviceAccessWire.application] = .string(application) }
        return failure
    }
}
