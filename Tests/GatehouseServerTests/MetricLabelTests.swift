@testable import GatehouseServer
import Testing

/// Hostile input round 2, finding 9: `/metrics` labels were unbounded — 200 made-up HTTP/2 methods made 200 label
/// sets. A request's method label is one of HTTP's methods or `other`.
@Suite(.timeLimit(.minutes(3))) struct MetricLabelTests {
    @Test func madeUpMethodsShareOneLabel() {
        let metrics = GatehouseMetrics()
        for index in 0..<200 {
            metrics.request(route: "/mfp/api/preauth/v1/preauthorize", method: "MADEUP\(index)", status: 405, duration: .milliseconds(1))
        }
        metrics.request(route: "/mfp/api/preauth/v1/preauthorize", method: "POST", status: 200, duration: .milliseconds(1))
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        #expect(!text.contains("MADEUP"))
        #expect(text.contains(#"method="other""#))
        #expect(text.contains(#"method="POST""#))
    }
}
