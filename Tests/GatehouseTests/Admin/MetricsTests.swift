import Foundation
import GatehouseProtocol
import GatehouseChecks
@testable import GatehouseServer
import GatehouseStore
import GatehouseSQLite
import Testing

/// `/metrics` after a known sequence of flows shows the matching counts.
@Suite(.timeLimit(.minutes(3))) struct MetricsTests {
    /// The samples of a Prometheus text exposition: `name{labels}` → value.
    static func samples(_ text: String) -> [String: Double] {
        var result: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            result[String(line[..<space])] = value
        }
        return result
    }

    /// Issue 35: `/metrics` beyond loopback asks for a confidential client's token with `gatehouse.metrics` (or an
    /// admin scope); that scope opens nothing else.
    @Test(.timeLimit(.minutes(3))) func metricsAskForATokenWithTheirScopeWhenNotOpen() async throws {
        let policy = Admin.policy.replacingOccurrences(of: "confidentialClients:\n", with: """
            confidentialClients:
              - { id: prometheus, secretHash: "$2b$04$axi4I88RAaRiFuao0JVORezeW1NmWqrlkcjbmbaiCdWPCDsWSH.J2", allowedScope: "gatehouse.metrics" }

            """)
        try await TestServer.run(policy: policy, metricsAccess: .token) { server in
            let url = server.baseURL + "/metrics"
            let anonymous = try await HTTP.send(.GET, url)
            #expect(anonymous.status == 401)
            #expect(anonymous.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            let introspector = try await Admin.token(server, client: "balance-service", scope: "authorization.introspect")
            #expect(try await HTTP.send(.GET, url, headers: [("Authorization", "Bearer \(introspector)")]).status == 403)
            let scraper = try await Admin.token(server, client: "prometheus", scope: "gatehouse.metrics")
            let scraped = try await HTTP.send(.GET, url, headers: [("Authorization", "Bearer \(scraper)")])
            #expect(scraped.status == 200)
            #expect(String(decoding: scraped.body, as: UTF8.self).contains("gatehouse_http_requests_total"))
            #expect(try await HTTP.send(.GET, url, headers: [("Authorization", "Bearer \(try await Admin.reader(server))")]).status == 200)
            #expect(try await Admin.send(.GET, server, "/registrations", token: scraper).status == 403)
        }
        // The default follows the host: open on loopback (tests, a laptop), a token beyond it.
        var configuration = ServerConfiguration(store: try SQLiteStore.open(dataDirectory: TestServer.temporaryDirectory()))
        #expect(configuration.effectiveMetricsAccess == .open)
        configuration.host = "0.0.0.0"
        #expect(configuration.effectiveMetricsAccess == .token)
        configuration.metricsAccess = .open
        #expect(configuration.effectiveMetricsAccess == .open)
    }

    @Test(.timeLimit(.minutes(3))) func aScrapeAfterAKnownSequenceShowsItsCounts() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            // Two registrations; the first answers wrong three times (two failures, then a block).
            var blocked = try ProtocolClient(server)
            try await blocked.register()
            let wrong: [String: JSON] = ["PinLongBlock": ["pin": "0000"]]
            #expect(try await blocked.preauthorize(scope: "PinLongBlock").status == 401)
            for status in [401, 401, 403] { #expect(try await blocked.preauthorize(scope: "PinLongBlock", answers: wrong).status == status) }
            // The second succeeds and gets a token, which is introspected, then revoked by an operator.
            var good = try ProtocolClient(server)
            try await good.register()
            #expect(try await good.preauthorize(scope: "PinLongBlock", answers: ["PinLongBlock": ["pin": "1234"]]).status == 200)
            let token = try await good.obtainToken(scope: "PinLongBlock").access_token
            let basic = ("Authorization", "Basic " + Data("balance-service:s3cret".utf8).base64EncodedString())
            let introspection = server.baseURL + "/mfp/api/az/v1/introspection"
            #expect(try await HTTP.postForm(introspection, [("token", token)], headers: [basic]).json?["active"] == true)
            let writer = try await Admin.writer(server)
            #expect(try await Admin.send(.POST, server, "/registrations/\(try #require(good.clientID))/revoke", token: writer).status == 200)
            #expect(try await HTTP.postForm(introspection, [("token", token)], headers: [basic]).json?["active"] == false)
            #expect(try await HTTP.send(.GET, server.baseURL + "/mfp/api/nowhere").status == 404)

            let scrape = try await HTTP.send(.GET, server.baseURL + "/metrics")
            #expect(scrape.status == 200)
            #expect(scrape.header("Content-Type")?.hasPrefix("text/plain") == true)
            let text = String(decoding: scrape.body, as: UTF8.self)
            let samples = Self.samples(text)
            #expect(samples["gatehouse_registrations_total"] == 2)
            #expect(samples[#"gatehouse_check_rounds_total{check="PinLongBlock"}"#] == 5)
            #expect(samples[#"gatehouse_check_challenges_total{check="PinLongBlock"}"#] == 3)
            #expect(samples[#"gatehouse_check_failures_total{check="PinLongBlock"}"#] == 2)
            #expect(samples[#"gatehouse_check_blocks_total{check="PinLongBlock"}"#] == 1)
            #expect(samples[#"gatehouse_check_successes_total{check="PinLongBlock"}"#] == 1)
            #expect(samples[#"gatehouse_tokens_issued_total{grant="authorization_code"}"#] == 1)
            #expect(samples[#"gatehouse_tokens_issued_total{grant="client_credentials"}"#] == 1)
            #expect(samples[#"gatehouse_tokens_introspected_total{active="true"}"#] == 1)
            #expect(samples[#"gatehouse_tokens_introspected_total{active="false"}"#] == 1)
            #expect(samples[#"gatehouse_tokens_revoked_total{by="admin"}"#] == 1)
            // Requests by route template (never a client id), method and status, with latency histograms.
            let preauthorize = #"route="/mfp/api/preauth/v1/preauthorize",method="POST""#
            #expect(samples["gatehouse_http_requests_total{\(preauthorize),status=\"401\"}"] == 3)
            #expect(samples["gatehouse_http_requests_total{\(preauthorize),status=\"403\"}"] == 1)
            #expect(samples["gatehouse_http_requests_total{\(preauthorize),status=\"200\"}"] == 1)
            #expect(samples["gatehouse_http_request_duration_seconds_count{\(preauthorize)}"] == 5)
            #expect(samples["gatehouse_http_request_duration_seconds_bucket{\(preauthorize),le=\"+Inf\"}"] == 5)
            #expect(samples[#"gatehouse_http_requests_total{route="/admin/v1/registrations/{clientId}/revoke",method="POST",status="200"}"#] == 1)
            // An unrouted request counts under one route (Hummingbird names it NotFound), not under its path.
            #expect(samples[#"gatehouse_http_requests_total{route="NotFound",method="GET",status="404"}"#] == 1)
            #expect(!text.contains(try #require(good.clientID)) && !text.contains(token))
            // Store operations: every round committed, two registrations created, no conflict.
            #expect(samples[#"gatehouse_store_operation_duration_seconds_count{operation="createRegistration"}"#] == 2)
            #expect((samples[#"gatehouse_store_operation_duration_seconds_count{operation="commit"}"#] ?? 0) >= 5)
            #expect(samples[#"gatehouse_store_conflicts_total{operation="commit"}"#] == nil, "one node, one request at a time")
        }
    }

    @Test(.timeLimit(.minutes(3))) func storeConflictsAndErrorsAreCounted() async throws {
        try await TestStores.with(.sqlite) { base in
            let metrics = GatehouseMetrics()
            let store = MeasuredStore(base, metrics: metrics)
            let state = AccountFailureState(failures: 1, windowStart: 1, lockedUntil: 0, lockouts: 0)
            #expect(try await store.saveAccountFailures("user:x", state: state, expectedVersion: 0))
            #expect(try await !store.saveAccountFailures("user:x", state: state, expectedVersion: 0), "a lost race")
            try await store.insertPolicy(StoredPolicy(version: 1, yaml: "", appliedAt: 0, actor: "a"))
            await #expect(throws: StoreError.duplicate) { try await store.insertPolicy(StoredPolicy(version: 1, yaml: "", appliedAt: 0, actor: "b")) }
            await #expect(throws: StoreError.notFound) {
                try await store.updateSigningKey(SigningKeyRecord(kid: "none", algorithm: "ES256", privateKeyPEM: "", createdAt: 0))
            }
            let samples = Self.samples(String(decoding: metrics.exposition(), as: UTF8.self))
            #expect(samples[#"gatehouse_store_conflicts_total{operation="saveAccountFailures"}"#] == 1)
            #expect(samples[#"gatehouse_store_conflicts_total{operation="insertPolicy"}"#] == 1)
            #expect(samples[#"gatehouse_store_errors_total{operation="updateSigningKey"}"#] == 1)
            #expect(samples[#"gatehouse_store_operation_duration_seconds_count{operation="saveAccountFailures"}"#] == 2)
        }
    }
}
