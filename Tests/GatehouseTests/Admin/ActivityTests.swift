import Foundation
import GatehouseProtocol
import GatehouseStore
import NIOHTTP1
import Testing

/// `GET /admin/v1/activity`: the audit log counted by time bucket and kind, which the console's chart draws.
@Suite(.timeLimit(.minutes(3))) struct ActivityTests {
    @Test(.timeLimit(.minutes(3))) func aKnownSequenceIsCountedByKindInItsBucket() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let reader = try await Admin.reader(server)
            let started = Int64(Date().timeIntervalSince1970 * 1000)
            var client = try ProtocolClient(server)
            try await client.register()
            let wrong: [String: JSON] = ["PinLongBlock": ["pin": "0000"]]
            for status in [401, 401, 403] {
                #expect(try await client.preauthorize(scope: "PinLongBlock", answers: wrong).status == status)
            }
            #expect(try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]]).status == 200)
            _ = try await client.obtainToken(scope: "accessRestricted")

            let answer = try await Admin.send(.GET, server, "/activity?sinceMs=\(started - 5_000)&bucketSec=3600", token: reader)
            #expect(answer.status == 200)
            #expect(answer.header("Cache-Control") == "no-store")
            let totals = try #require(answer.json?["totals"])
            #expect(totals["registration"] == 1 && totals["check.failure"] == 2 && totals["check.blocked"] == 1)
            #expect(totals["check.success"] == 1)
            // The readers' own client-credentials token is counted too: one issued to ops-viewer, one to the client.
            #expect(totals["token.issued"] == 1 || totals["token.issued"] == 2)
            let buckets = try #require(answer.json?["buckets"]?.arrayValue)
            #expect(buckets.count == 1)
            #expect(buckets.first?["startMs"]?.intValue.map(Int64.init) == started - 5_000)
            #expect(buckets.first?["counts"]?["check.failure"] == 2)
            #expect(answer.json?["bucketSec"] == 3600)

            // The default window: the last hour by the minute, every bucket listed, the events in the latest ones.
            let recent = try await Admin.send(.GET, server, "/activity", token: reader)
            #expect(recent.status == 200)
            let minutes = try #require(recent.json?["buckets"]?.arrayValue)
            #expect(minutes.count == 61)
            let summed = minutes.compactMap { $0["counts"]?["check.failure"]?.intValue }.reduce(0, +)
            #expect(summed == 2)
            #expect(minutes.first?["counts"]?.objectValue?.isEmpty == true)

            // Nothing yet in a window that starts after the events.
            let later = try await Admin.send(.GET, server, "/activity?sinceMs=\(Int64(Date().timeIntervalSince1970 * 1000))&bucketSec=1",
                                             token: reader)
            #expect(later.status == 200)
            #expect(later.json?["totals"]?.objectValue?.isEmpty == true)
        }
    }

    @Test(.timeLimit(.minutes(3))) func badParametersAndCallersAreRefused() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let reader = try await Admin.reader(server)
            let future = Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000
            for query in ["bucketSec=0", "bucketSec=86401", "bucketSec=x", "sinceMs=-1", "sinceMs=\(future)", "sinceMs=0&bucketSec=60",
                          "sinceMs=1.5"] {
                let refused = try await Admin.send(.GET, server, "/activity?" + query, token: reader)
                #expect(refused.status == 400, "\(query)")
                #expect(refused.json?["errorCode"] == "INVALID_REQUEST", "\(query)")
                #expect(refused.json?["errorMsg"]?.stringValue?.isEmpty == false)
            }
            #expect(try await Admin.send(.GET, server, "/activity", token: nil).status == 401)
            let other = try await Admin.token(server, client: "balance-service", scope: "authorization.introspect")
            #expect(try await Admin.send(.GET, server, "/activity", token: other).status == 403)
            #expect(try await Admin.send(.GET, server, "/activity", token: try await Admin.writer(server)).status == 200)
        }
    }
}

extension AdminStoreConformanceTests {
    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.allCases)
    func auditActivityIsCountedByBucketAndKind(kind: StoreKind) async throws {
        try await TestStores.with(kind) { store in
            #expect(try await store.auditActivity(since: 0, until: 100_000, bucketMillis: 1_000).isEmpty)
            try await store.appendAudit([
                AuditEvent(time: 9_999, event: "check.failure"),          // before the window
                AuditEvent(time: 10_000, event: "check.failure"),
                AuditEvent(time: 10_500, event: "check.failure"),
                AuditEvent(time: 10_999, event: "token.issued"),
                AuditEvent(time: 12_000, event: "check.blocked"),
                AuditEvent(time: 13_999, event: "check.failure"),
                AuditEvent(time: 14_000, event: "check.failure"),         // the end is exclusive
            ])
            let counts = try await store.auditActivity(since: 10_000, until: 14_000, bucketMillis: 1_000)
            #expect(counts == [
                AuditActivityCount(bucket: 0, event: "check.failure", count: 2),
                AuditActivityCount(bucket: 0, event: "token.issued", count: 1),
                AuditActivityCount(bucket: 2, event: "check.blocked", count: 1),
                AuditActivityCount(bucket: 3, event: "check.failure", count: 1),
            ])
            let wide = try await store.auditActivity(since: 0, until: 1_000_000, bucketMillis: 60_000)
            #expect(wide == [
                AuditActivityCount(bucket: 0, event: "check.blocked", count: 1),
                AuditActivityCount(bucket: 0, event: "check.failure", count: 5),
                AuditActivityCount(bucket: 0, event: "token.issued", count: 1),
            ])
        }
    }
}
