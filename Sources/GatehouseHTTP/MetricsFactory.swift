package import Prometheus

extension PrometheusMetricsFactory {
    /// A swift-metrics factory over `registry` with the latency buckets of both `gatehouse serve` and the gateway
    /// (1 ms to 10 s), so that their `/metrics` histograms line up.
    package static func gatehouse(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        ]
        return factory
    }
}
