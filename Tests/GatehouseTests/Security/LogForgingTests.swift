@testable import GatehouseHTTP
import Logging
import Testing

/// Hostile input round 2, finding 9: a registration's application version containing a newline forged log lines.
/// Control characters in a log line's metadata and message are escaped: one event, one line.
@Suite(.timeLimit(.minutes(3))) struct LogForgingTests {
    @Test func aNewlineInAValueCannotStartAForgedLine() {
        let handler = StandardErrorLogHandler(label: "gatehouse", metadataProvider: nil)
        let forged = "1.0\n2026-11-26T00:00:00+0000 info gatehouse: [GatehouseServer] Registered client admin"
        let line = handler.line(for: LogEvent(level: .info, message: "registered \u{1b}[31m\r", metadata: ["version": .string(forged)],
                                              source: "S", file: #fileID, function: #function, line: #line))
        #expect(line.filter { $0 == "\n" || $0 == "\r" }.count == 1)  // the line's own end only (CRLF is one Character)
        #expect(line.hasSuffix("\n"))
        #expect(line.contains("version=1.0\\n2026-11-26T00:00:00+0000 info"))
        #expect(line.contains("registered \\u{1b}[31m\\r"))
        #expect(StandardErrorLogHandler.escaped("plain text") == "plain text")
    }
}
