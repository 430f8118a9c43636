import Foundation
import Logging
import GatehouseProtocol

/// The device events ``WLAnalytics`` can listen to (MobileFirst's `WLAnalyticsDeviceEvent`).
public struct WLAnalyticsDeviceEvent: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
}

/// App lifecycle events (MobileFirst's constant).
public let LIFECYCLE = WLAnalyticsDeviceEvent(rawValue: 0)
/// Network events (MobileFirst's constant).
public let NETWORK = WLAnalyticsDeviceEvent(rawValue: 1)

/// MobileFirst's `WLAnalytics` forwarding to swift-log (label `mfp.analytics`): what an app logs for analytics is
/// written, with its metadata and the user context, through whatever `LoggingSystem.bootstrap` chose.
///
/// `WLAnalytics.sharedInstance().log("transfer", withMetadata: ["amount": 10])` writes an info message `transfer` with
/// metadata `amount=10` (and `userContext` once ``setUserContext(_:)`` named the user). There is no MobileFirst
/// Analytics server behind it: ``send()`` uploads nothing (events are written as they are logged), and the device
/// event listeners are remembered (``deviceEventListeners``) but collect nothing automatically.
public final class WLAnalytics: NSObject, Sendable {
    private static let shared = WLAnalytics()

    /// The shared instance (`WLAnalytics!`, as Swift sees MobileFirst's `+sharedInstance`).
    public static func sharedInstance() -> WLAnalytics! { shared }

    struct State {
        var enabled = true
        var userContext: String?
        var listeners: Set<WLAnalyticsDeviceEvent> = []
    }

    private let state = Locked(State())
    private var logger: Logger { MobileFirstLogging.logger("mfp.analytics") }

    private override init() {}

    /// Writes `message` with `metadata` (keys and values as their descriptions), unless disabled.
    public func log(_ message: String!, withMetadata metadata: [AnyHashable: Any]! = nil) {
        let (enabled, user) = state.withLock { ($0.enabled, $0.userContext) }
        guard enabled else { return }
        var fields = LogMetadataBridging.metadata(metadata) ?? [:]
        if let user { fields["userContext"] = .string(user) }
        logger.info("\(message ?? "")", metadata: fields.isEmpty ? nil : fields)
    }

    /// Accepted: MobileFirst uploads the logged events here; they were written as they were logged.
    public func send() {}

    /// Names the user the following events are about (metadata `userContext`).
    public func setUserContext(_ user: String!) { state.withLock { $0.userContext = user } }
    /// Stops naming a user.
    public func unsetUserContext() { state.withLock { $0.userContext = nil } }

    /// Writes events again (the default).
    public func enable() { state.withLock { $0.enabled = true } }
    /// Stops writing events.
    public func disable() { state.withLock { $0.enabled = false } }
    /// Whether events are written.
    public func isEnabled() -> Bool { state.withLock { $0.enabled } }

    /// Remembers that the app asked for `event`'s events (collected by MobileFirst's SDK; not here).
    public func addDeviceEventListener(_ event: WLAnalyticsDeviceEvent) { _ = state.withLock { $0.listeners.insert(event) } }
    /// Forgets a listener added with ``addDeviceEventListener(_:)``.
    public func removeDeviceEventListener(_ event: WLAnalyticsDeviceEvent) { _ = state.withLock { $0.listeners.remove(event) } }
    /// The device events asked for.
    public var deviceEventListeners: Set<WLAnalyticsDeviceEvent> { state.withLock { $0.listeners } }
}
