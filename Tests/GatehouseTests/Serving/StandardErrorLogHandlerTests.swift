@testable import GatehouseHTTP
import Logging
import Synchronization
import Testing

/// `gatehouse serve`'s log lines are swift-log's `StreamLogHandler` lines, with the metadata formatted at write time.
@Suite(.timeLimit(.minutes(3))) struct StandardErrorLogHandlerTests {
    /// What a `StreamLogHandler` writes.
    final class Lines: TextOutputStream, Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func write(_ string: String) { lines.withLock { $0.append(string) } }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String { "the disk is full" }
    }

    @Test func linesAreStreamLogHandlersWithoutTheTimestampDifference() {
        let lines = Lines()
        var stream = StreamLogHandler(label: "gatehouse", stream: lines, metadataProvider: nil)
        var ours = StandardErrorLogHandler(label: "gatehouse", metadataProvider: nil)
        for key in ["hb.request.id", "b", "a"] {
            stream[metadataKey: key] = "value of \(key)"
            ours[metadataKey: key] = "value of \(key)"
        }
        let events = [
            LogEvent(level: .warning, message: "plain", metadata: nil, source: "GatehouseServer", file: #fileID, function: #function, line: #line),
            LogEvent(level: .error, message: "with more", metadata: ["a": "explicit wins", "c": ["x", "y"]], source: "S", file: #fileID,
                     function: #function, line: #line),
            LogEvent(level: .info, message: "failed", error: Failure(), metadata: nil, source: "S", file: #fileID, function: #function, line: #line),
        ]
        for event in events {
            stream.log(event: event)
            let expected = lines.all.last ?? ""
            let line = ours.line(for: event)
            // The same text after the timestamp (which may have ticked between the two).
            #expect(line.drop { $0 != " " } == expected.drop { $0 != " " })
            #expect(line.prefix(while: { $0 != " " }).count == expected.prefix(while: { $0 != " " }).count)
        }
        #expect(ours.line(for: events[0]).hasSuffix(" warning gatehouse: a=value of a b=value of b hb.request.id=value of hb.request.id [GatehouseServer] plain\n"))
    }
}
