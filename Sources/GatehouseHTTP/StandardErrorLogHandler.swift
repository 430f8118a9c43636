#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
package import Logging
import Synchronization

/// The log handler of `gatehouse serve` and `gatehouse gateway`: swift-log's `StreamLogHandler` lines on standard
/// error, with the logger's metadata formatted when a line is written instead of every time it is set.
///
/// Hummingbird gives every request's logger a request id; `StreamLogHandler` formats its metadata then, for every
/// request whether it logs or not (4 % of a protected request's CPU). Lines are the same:
/// `<time> <level> <label>: <key=value …> [<source>] <message>`.
package struct StandardErrorLogHandler: LogHandler {
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String

    package init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    /// Makes this the handler of every logger made from now on (`LoggingSystem.bootstrap`, once per process).
    package static func bootstrap() {
        LoggingSystem.bootstrap { label in StandardErrorLogHandler(label: label) }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        Self.write(line(for: event))
    }

    /// The line `event` is written as, metadata formatted now.
    func line(for event: LogEvent) -> String {
        var effective = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            effective.merge(provided) { _, provided in provided }
        }
        if let explicit = event.metadata, !explicit.isEmpty {
            effective.merge(explicit) { _, explicit in explicit }
        }
        if let error = event.error {
            effective["error.message"] = "\(error)"
            effective["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var line = Self.timestamp()
        line += " \(event.level)"
        if !label.isEmpty { line += " \(label)" }
        line += ":"
        for (key, value) in effective.sorted(by: { $0.key < $1.key }) { line += " \(key)=" + Self.escaped("\(value)") }
        line += " [\(event.source)] " + Self.escaped("\(event.message)") + "\n"
        return line
    }

    /// `text` with its control characters escaped (`\n`, `\r`, `\t`, `\u{1b}`), so that nothing a client sent — an
    /// application version, a user name — can end a line and forge the next one.
    static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Local time as `StreamLogHandler` writes it: `2026-11-25T06:19:07+0000`.
    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static let writing = Mutex(())

    #if canImport(Glibc)
    private static let systemWrite = Glibc.write
    #else
    private static let systemWrite = Darwin.write
    #endif

    /// One whole line at a time, so that lines of concurrent loggers do not interleave.
    private static func write(_ line: String) {
        var line = line
        line.withUTF8 { bytes in
            writing.withLock { _ in
                var offset = 0
                while offset < bytes.count {
                    let written = systemWrite(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                    if written > 0 {
                        offset += written
                    } else if written < 0, errno == EINTR {
                        continue
                    } else {
                        return
                    }
                }
            }
        }
    }
}
