import Logging
import Synchronization

/// Keeps every log line (message and metadata, as text) of the loggers it makes, at `trace` level.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    /// Everything logged so far.
    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    /// A logger that records here.
    func logger(_ label: String = "captured") -> Logger {
        var logger = Logger(label: label) { _ in CapturingLogHandler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }
}

/// The `LogHandler` behind ``LogCapture``.
struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String, file: String,
             function: String, line: UInt) {
        let all = self.metadata.merging(explicit ?? [:]) { $1 }
        capture.append("\(level) \(message) \(all.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))")
    }
}
