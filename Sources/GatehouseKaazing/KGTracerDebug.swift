import Logging

/// KAAZING's switch for its client's logging (`KGTracerDebug = YES;`): when `true`, ``KGWebSocket`` logs its
/// connections' events (connecting, the challenges' schemes, opened, closed — never credentials) at `debug` through
/// swift-log, label `KGWebSocket`.
nonisolated(unsafe) public var KGTracerDebug = false

/// The logger of the KAAZING façade, at `debug` while ``KGTracerDebug`` is on and `warning` otherwise.
var kaazingLogger: Logger {
    var logger = Logger(label: "KGWebSocket")
    logger.logLevel = KGTracerDebug ? .debug : .warning
    return logger
}
