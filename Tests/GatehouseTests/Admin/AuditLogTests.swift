import Foundation
import GatehouseProtocol
import GatehouseSQLite
import GatehouseStore
@testable import GatehouseServer
import Logging
import ServiceLifecycle
import Testing

/// The audit log of a known sequence, read back through the admin API in order, with no secret or token in it.
@Suite(.timeLimit(.minutes(3))) struct AuditLogTests {
    @Test(.timeLimit(.minutes(3))) func aKnownSequenceIsReadBackInOrderWithoutSecrets() async throws {
        // Three wrong PINs and three wrong secrets from this machine: the sixth failure locks its address.
        try await TestServer.run(policy: Admin.policy + "\nsourceThrottle: { threshold: 6 }\n") { server in
            let writer = try await Admin.writer(server)
            let reader = try await Admin.reader(server)
            var client = try ProtocolClient(server)
            try await client.register()
            let clientID = try #require(client.clientID)
            let wrong: [String: JSON] = ["PinLongBlock": ["pin": "0000"]]
            #expect(try await client.preauthorize(scope: "PinLongBlock", answers: wrong).status == 401)
            #expect(try await client.preauthorize(scope: "PinLongBlock", answers: wrong).status == 401)
            #expect(try await client.preauthorize(scope: "PinLongBlock", answers: wrong).status == 403)
            #expect(try await Admin.send(.POST, server, "/registrations/\(clientID)/checks/PinLongBlock/reset", token: writer).status == 200)
            #expect(try await client.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": "1234"]]).status == 200)
            let token = try await client.obtainToken(scope: "PinLongBlock").access_token
            // Three wrong secrets (after the three wrong PINs) lock the source they came from (this machine).
            for _ in 0..<3 {
                await #expect(throws: TestFailure.self) { try await Admin.token(server, client: "balance-service", secret: "wr0ng-s3cret", scope: "") }
            }

            // Read back page by page (2 a page): the whole log, in order.
            var events: [JSON] = []
            var bodies = ""
            var after: Int64? = nil
            repeat {
                let page = try await Admin.send(.GET, server, "/audit?limit=2" + (after.map { "&after=\($0)" } ?? ""), token: reader)
                #expect(page.status == 200)
                bodies += String(decoding: page.body, as: UTF8.self)
                events += page.json?["events"]?.arrayValue ?? []
                after = page.json?["next"]?.intValue.map(Int64.init)
            } while after != nil && events.count < 100
            let mine = events.filter { $0["clientId"]?.stringValue == clientID || $0["event"] == "source.locked" }
            #expect(mine.map { $0["event"]?.stringValue ?? "" } == [
                "registration", "check.failure", "check.failure", "check.blocked", "admin.check.reset", "check.success",
                "token.issued", "source.locked",
            ])
            try #require(mine.count == 8)
            let ids = events.compactMap { $0["id"]?.intValue }
            #expect(ids == ids.sorted() && Set(ids).count == ids.count)
            #expect(mine.dropLast().allSatisfy { $0["application"] == "com.sample.pincodeswift" && $0["address"] == "127.0.0.1" })
            #expect(mine.allSatisfy { $0["node"]?.stringValue?.isEmpty == false && $0["time"]?.intValue != nil })
            #expect(mine[1]["check"] == "PinLongBlock" && mine[4]["actor"] == "ops" && mine[4]["check"] == "PinLongBlock")
            #expect(mine[7]["detail"]?.stringValue?.hasPrefix("source:127.0.0.1 locked until") == true)
            // The admin tokens, the client's token and every secret are absent.
            // (In the events' texts: a PIN's digits may well stand inside a millisecond timestamp.)
            let texts = events.flatMap { $0.objectValue?.values.compactMap(\.stringValue) ?? [] }.joined(separator: "\n")
            #expect(texts.contains("PinLongBlock"), "the texts are read")
            for secret in [token, writer, reader, "1234", "0000", "s3cret", "wr0ng-s3cret", "$2b$"] {
                #expect(!texts.contains(secret) && !bodies.contains("\"\(secret)\""), "the audit log holds \(secret.prefix(12))…")
            }
            // The tokens' payloads are absent too (a token's parts could be pasted elsewhere).
            for part in [token, writer].flatMap({ $0.split(separator: ".").map(String.init) }) {
                #expect(!bodies.contains(part))
            }
            #expect(try await Admin.send(.GET, server, "/audit?after=x", token: reader).status == 400)
        }
    }

    @Test(.timeLimit(.minutes(3))) func eventsAreAlsoWrittenAsJSONLinesWhenAsked() async throws {
        let capture = LogCapture()
        try await TestServer.run(policy: Admin.policy, auditLines: capture.logger("gatehouse.audit")) { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let clientID = try #require(client.clientID)
            // An answer no id or time can hold by chance (a client id is hexadecimal: "0987" once began one).
            let wrong = try await client.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": "wrong-pin-q7"]])
            #expect(wrong.status == 401)
            let lines = capture.text.split(separator: "\n").map { String($0.drop { $0 != "{" }.prefix { $0 != "\n" }) }
            let events = lines.compactMap { try? JSONDecoder().decode(JSON.self, from: Data($0.utf8)) }
            #expect(events.contains { $0["event"] == "registration" && $0["clientId"] == .string(clientID) })
            #expect(events.contains { $0["event"] == "check.failure" && $0["check"] == "PinLongBlock" && $0["node"] != nil })
            #expect(events.allSatisfy { $0["id"] == nil }, "ids are the store's")
            #expect(!capture.text.contains("wrong-pin-q7"), "never the answer")
        }
    }
}

/// How the audit log stores its events: in groups, by a writer of its own, never holding up a request.
@Suite(.timeLimit(.minutes(3))) struct AuditLogWriterTests {
    /// An SQLite store whose operations are counted.
    static func measuredStore() throws -> (MeasuredStore, GatehouseMetrics, String) {
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let metrics = GatehouseMetrics()
        return (MeasuredStore(try SQLiteStore(path: directory + "/gatehouse.sqlite"), metrics: metrics), metrics, directory)
    }

    static func appendCalls(_ metrics: GatehouseMetrics) -> Int {
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix(#"gatehouse_store_operation_duration_seconds_count{operation="appendAudit"}"#) }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) } ?? 0
    }

    static func event(_ index: Int) -> AuditEvent {
        AuditEvent(time: EpochTime.nowMillis(), event: "registration", clientID: "c\(index)")   // now: older ones are pruned
    }

    @Test func eventsRecordedTogetherAreStoredInOneCallWithoutAFlush() async throws {
        let (store, metrics, directory) = try Self.measuredStore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let audit = AuditLog(store: store, node: "n1", retentionDays: 1, logger: Logger(label: "test"), linger: .milliseconds(200))
        for index in 0..<200 { audit.record([Self.event(index)]) }
        var stored: [AuditEvent] = []
        for _ in 0..<400 where stored.count < 200 {
            try await Task.sleep(for: .milliseconds(10))
            stored = try await store.auditEvents(after: 0, limit: 500)
        }
        #expect(stored.map(\.clientID) == (0..<200).map { "c\($0)" }, "every event, in order, without a flush")
        #expect(stored.allSatisfy { $0.node == "n1" })
        // The call is counted when it returns, which can be a moment after a reader sees its rows committed.
        for _ in 0..<200 where Self.appendCalls(metrics) == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(Self.appendCalls(metrics) == 1, "200 requests' events, one store call")
    }

    @Test func aFlushWritesAtOnceAndAGracefulShutdownStoresWhatIsQueued() async throws {
        let (store, metrics, directory) = try Self.measuredStore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A linger no test waits for: only a flush or the shutdown can store these.
        let audit = AuditLog(store: store, node: "n1", retentionDays: 1, logger: Logger(label: "test"), linger: .seconds(3600))
        audit.record([Self.event(1), Self.event(2)])
        await audit.flushed()
        #expect(try await store.auditEvents(after: 0, limit: 10).map(\.clientID) == ["c1", "c2"])
        await audit.flushed()
        #expect(Self.appendCalls(metrics) == 1, "a flush with nothing queued writes nothing")

        let group = ServiceGroup(configuration: .init(services: [audit], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        audit.record([Self.event(3)])
        audit.record([Self.event(4)])
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(try await store.auditEvents(after: 0, limit: 10).map(\.clientID) == ["c1", "c2", "c3", "c4"])
    }
}
