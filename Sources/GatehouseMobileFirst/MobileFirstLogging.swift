package import Logging
import GatehouseProtocol

/// Where ``OCLogger`` and ``WLAnalytics`` write: swift-log loggers, by label (`LoggingSystem.bootstrap` chooses the
/// backend, as for the rest of the SDK).
package enum MobileFirstLogging {
    private static let factory = Locked<(@Sendable (String) -> any LogHandler)?>(nil)

    /// Tests: the handler every logger made from now on writes to, instead of the bootstrapped backend (`nil`: the
    /// backend).
    package static func setHandlerFactory(_ make: (@Sendable (String) -> any LogHandler)?) {
        factory.withLock { $0 = make }
    }

    /// A logger labelled `label`.
    static func logger(_ label: String) -> Logger {
        if let make = factory.withLock({ $0 }) { return Logger(label: label, factory: make) }
        return Logger(label: label)
    }
}
