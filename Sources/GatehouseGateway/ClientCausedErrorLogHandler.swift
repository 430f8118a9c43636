import Logging

/// The log handler of Hummingbird's per-connection handling in the gateway: `error` lines become `debug`.
///
/// Hummingbird logs "Error handling upgrade result" at `error` for every connection whose first request NIO's
/// parser or WebSocket upgrader refused, that is for any client that sends `GARBAGE`: at `error`, anyone could
/// flood the log that operators watch. The gateway answers and logs these requests itself, at `debug`.
struct ClientCausedErrorLogHandler: LogHandler {
    var base: any LogHandler

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if event.level == .error { event.level = .debug }
        guard event.level >= base.logLevel else { return }
        base.log(event: event)
    }

    /// `logger` with its errors demoted.
    static func demoting(_ logger: Logger) -> Logger {
        var demoted = logger
        demoted.handler = ClientCausedErrorLogHandler(base: logger.handler)
        return demoted
    }
}
