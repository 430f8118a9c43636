import Foundation
import Logging
import GatehouseProtocol

/// MobileFirst's log levels (`OCLogType`), most severe first.
public enum OCLogType: Int, Sendable {
    case fatal = 0, error, warn, info, log, debug, trace

    /// The swift-log level it writes at.
    var level: Logger.Level {
        switch self {
        case .fatal: .critical
        case .error: .error
        case .warn: .warning
        case .info, .log: .info
        case .debug: .debug
        case .trace: .trace
        }
    }
}

/// MobileFirst's level names, as Swift sees its `OCLogType` constants.
public let OCLogger_FATAL = OCLogType.fatal
public let OCLogger_ERROR = OCLogType.error
public let OCLogger_WARN = OCLogType.warn
public let OCLogger_INFO = OCLogType.info
public let OCLogger_LOG = OCLogType.log
public let OCLogger_DEBUG = OCLogType.debug
public let OCLogger_TRACE = OCLogType.trace

/// MobileFirst's logger by its 7.x and Android name.
public typealias WLLogger = OCLogger

/// MobileFirst's client logger (`OCLogger`; ``WLLogger`` is the same class) forwarding to swift-log: one logger per
/// package, labelled with the package's name, writing through whatever `LoggingSystem.bootstrap` chose.
///
/// `OCLogger.getInstanceWithPackage("MyApp").logInfoWithMessages("Signed in as %@", name)`. Messages are formatted
/// as `String(format:)` formats them. ``setLevel(_:)`` filters every package (default: debug, as MobileFirst's);
/// ``setCapture(_:)`` and ``send()`` are accepted and do nothing more here — MobileFirst captured logs to a file and
/// uploaded them to its Analytics server; here the backend you bootstrap receives every message as it is written.
public final class OCLogger: NSObject, Sendable {
    private static let threshold = Locked(OCLogType.debug)
    private static let capture = Locked(true)

    /// The package (the swift-log label).
    public let package: String
    private let logger: Logger

    private init(package: String) {
        self.package = package
        logger = MobileFirstLogging.logger(package)
    }

    /// The logger for `package` (`OCLogger!`, as Swift sees MobileFirst's factory method).
    public static func getInstanceWithPackage(_ package: String!) -> OCLogger! {
        OCLogger(package: package ?? "")
    }

    /// Writes only messages at `level` or more severe, from every package.
    public static func setLevel(_ level: OCLogType) { threshold.withLock { $0 = level } }
    /// The level set with ``setLevel(_:)``.
    public static func getLevel() -> OCLogType { threshold.withLock { $0 } }
    /// Accepted (MobileFirst: keep messages in its log file for ``send()``); every message goes to swift-log here.
    public static func setCapture(_ flag: Bool) { capture.withLock { $0 = flag } }
    /// The flag set with ``setCapture(_:)``.
    public static func getCapture() -> Bool { capture.withLock { $0 } }
    /// Accepted (MobileFirst: upload the captured messages); nothing is kept to upload here.
    public static func send() {}

    public func logFatalWithMessages(_ message: String!, _ arguments: any CVarArg...) { write(.fatal, message, arguments) }
    public func logErrorWithMessages(_ message: String!, _ arguments: any CVarArg...) { write(.error, message, arguments) }
    public func logWarnWithMessages(_ message: String!, _ arguments: any CVarArg...) { write(.warn, message, arguments) }
    public func logInfoWithMessages(_ message: String!, _ arguments: any CVarArg...) { write(.info, message, arguments) }
    public func logLogWithMessages(_ message: String!, _ arguments: any CVarArg...) { write(.log, message, arguments) }
    public func logDebugWithMessages(_ message: String!, _ arguments: any CVarArg...) { write(.debug, message, arguments) }
    public func logTraceWithMessages(_ message: String!, _ arguments: any CVarArg...) { write(.trace, message, arguments) }

    /// Writes `message` at `level` with `metadata` (MobileFirst's `logWithLevel:message:args:userInfo:`, without the
    /// format).
    public func log(withLevel level: OCLogType, message: String!, userInfo: [AnyHashable: Any]! = nil) {
        guard level.rawValue <= Self.getLevel().rawValue else { return }
        logger.log(level: level.level, "\(message ?? "")", metadata: LogMetadataBridging.metadata(userInfo))
    }

    private func write(_ level: OCLogType, _ message: String?, _ arguments: [any CVarArg]) {
        guard level.rawValue <= Self.getLevel().rawValue else { return }
        let text = arguments.isEmpty ? (message ?? "") : String(format: message ?? "", arguments: arguments)
        logger.log(level: level.level, "\(text)")
    }
}

/// MobileFirst's metadata dictionaries as swift-log metadata: keys and values as their descriptions.
enum LogMetadataBridging {
    static func metadata(_ dictionary: [AnyHashable: Any]?) -> Logger.Metadata? {
        guard let dictionary, !dictionary.isEmpty else { return nil }
        var metadata: Logger.Metadata = [:]
        for (key, value) in dictionary { metadata[String(describing: key.base)] = .string(String(describing: value)) }
        return metadata
    }
}
