import Foundation
import GatehouseHTTP
import GatehouseProtocol
import Logging
import Testing

/// OpenTelemetry traces (issue 35): `serve` and `gateway` export a span tree per request to an OTLP/HTTP collector —
/// here a collector of the suite's on loopback, which decodes what arrives and asserts its shape.
@Suite(.timeLimit(.minutes(3))) struct TracingTests {
    static let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let callerSpan = "00f067aa0ba902b7"

    @Test func traceparentIsReadAsW3CTraceContextSaysAndNothingElse() throws {
        let parent = try #require(TraceParent("00-\(Self.traceID)-\(Self.callerSpan)-01"))
        #expect(parent.traceIDHex == Self.traceID && parent.spanIDHex == Self.callerSpan && parent.sampled)
        #expect(parent.text == "00-\(Self.traceID)-\(Self.callerSpan)-01")
        #expect(TraceParent("00-\(Self.traceID)-\(Self.callerSpan)-00")?.sampled == false)
        // A later version: its first four parts, and whatever follows a dash.
        #expect(TraceParent("cc-\(Self.traceID)-\(Self.callerSpan)-01-what-the-future-adds")?.traceIDHex == Self.traceID)
        for refused in [
            "00-\(Self.traceID.uppercased())-\(Self.callerSpan)-01",   // upper case
            "00-00000000000000000000000000000000-\(Self.callerSpan)-01", // zero trace
            "00-\(Self.traceID)-0000000000000000-01",                 // zero span
            "ff-\(Self.traceID)-\(Self.callerSpan)-01",                 // the forbidden version
            "00-\(Self.traceID)-\(Self.callerSpan)-01-extra",           // version 00 is exactly 55 characters
            "00-\(Self.traceID)-\(Self.callerSpan)",                    // short
            "00_\(Self.traceID)-\(Self.callerSpan)-01",                 // wrong separator
            "00-\(Self.traceID.dropLast())g-\(Self.callerSpan)-01",     // not hexadecimal
            "",
        ] {
            #expect(TraceParent(refused) == nil, "\(refused)")
        }
        #expect(OTLPExporter.headers(parsing: "api-key=s%3Dcret, x-tenant = blue")?.map { "\($0.0): \($0.1)" } == ["api-key: s=cret", "x-tenant: blue"])
        #expect(OTLPExporter.headers(parsing: "no-equals-sign") == nil)
    }

    /// A login round: one trace whose server span has the UserLogin check below it, the bcrypt run below the check,
    /// and the store calls; every span's parent is in the trace.
    @Test func aLoginRoundIsOneTraceWithItsCheckBcryptAndStoreCallsBelowIt() async throws {
        let collector = try await TraceCollector.start()
        let tracer = OTLPTracer(exporter: collector.exporter(headers: [("x-api-key", "collector-key")]))
        try await TestServer.run(tracer: tracer) { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let login = try await client.preauthorize(scope: "UserLogin", answers: ["UserLogin": ["username": "john", "password": "demo"]])
            #expect(login.status == 200)
            let rootName = "POST /mfp/api/preauth/v1/preauthorize"
            let found = try await collector.trace(rootName: rootName, spans: 4)
            let (root, spans) = try #require(found)
            #expect(root.parentSpanId == nil && root.kind == OTLPTraces.Kind.server.rawValue)
            #expect(root.attribute("http.response.status_code") == .int(200))
            #expect(root.attribute("http.route") == .string("/mfp/api/preauth/v1/preauthorize"))
            #expect(root.attribute("client.address") == .string("127.0.0.1"))
            let check = try #require(spans.children(of: root).named("check UserLogin").first)
            #expect(check.attribute("gatehouse.security_check") == .string("UserLogin"))
            #expect(!spans.children(of: check).named("bcrypt verify").isEmpty)
            let storeCalls = spans.filter { $0.name.hasPrefix("store ") }
            #expect(storeCalls.contains { $0.name == "store storedClient" && $0.parentSpanId == root.spanId })
            #expect(storeCalls.allSatisfy { $0.attribute("db.operation.name") != nil })
            // One tree: ids of the right size, every parent in the trace, children within their parent's time.
            let ids = Set(spans.map(\.spanId))
            #expect(ids.count == spans.count)
            for span in spans {
                #expect(span.traceId.count == 32 && span.spanId.count == 16)
                if span.spanId != root.spanId { #expect(span.parentSpanId.map(ids.contains) == true, "\(span.name)") }
                #expect(UInt64(span.startTimeUnixNano)! <= UInt64(span.endTimeUnixNano)!)
                #expect(UInt64(span.startTimeUnixNano)! >= UInt64(root.startTimeUnixNano)!, "\(span.name)")
            }
            // The registration before it was a trace of its own.
            #expect(collector.spans.contains { $0.name == "POST /mfp/api/registration/v1/self" && $0.traceId != root.traceId })
        }
        #expect(collector.exportFields.allSatisfy { $0["x-api-key"] == "collector-key" })
        #expect(collector.resources.first?.attributes.contains(.init("service.name", .string("gatehouse-test"))) == true)
        await collector.stop()
    }

    /// A trusted proxy's `traceparent` is continued (and its `sampled: false` obeyed); anyone else's starts nothing.
    @Test func aTrustedCallersTraceIsContinuedAnyoneElsesIgnored() async throws {
        let collector = try await TraceCollector.start()
        let caller = "00-\(Self.traceID)-\(Self.callerSpan)-01"
        try await TestServer.run(trustedProxies: ["127.0.0.1"], tracer: OTLPTracer(exporter: collector.exporter())) { server in
            let unsampled = "00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-\(Self.callerSpan)-00"
            #expect(try await HTTP.send(.GET, server.baseURL + "/health", headers: [("traceparent", unsampled)]).status == 200)
            #expect(try await HTTP.send(.GET, server.baseURL + "/health", headers: [("traceparent", caller)]).status == 200)
            let spans = try await collector.spans { $0.contains { $0.traceId == Self.traceID } }
            let continued = try #require(spans.first { $0.traceId == Self.traceID })
            #expect(continued.parentSpanId == Self.callerSpan && continued.name == "GET /health")
            #expect(!spans.contains { $0.traceId.hasPrefix("aaaa") })
        }
        try await TestServer.run(tracer: OTLPTracer(exporter: collector.exporter())) { server in
            #expect(try await HTTP.send(.GET, server.baseURL + "/ready", headers: [("traceparent", caller)]).status == 200)
            let spans = try await collector.spans { $0.contains { $0.name == "GET /ready" } }
            let own = try #require(spans.first { $0.name == "GET /ready" })
            #expect(own.traceId != Self.traceID && own.parentSpanId == nil)
        }
        await collector.stop()
    }

    /// The gateway: a server span per relayed exchange, its admission (with the bcrypt run) and its upstream exchange
    /// below it; the upstream gets the upstream span as its `traceparent`, never the client's own.
    @Test func theGatewaysExchangeHasItsAdmissionAndUpstreamBelowItAndTheUpstreamItsParent() async throws {
        let collector = try await TraceCollector.start()
        let tracer = OTLPTracer(exporter: collector.exporter(serviceName: "gatehouse-gateway"))
        try await RecordingFixture.run(tracer: tracer, { GatewayForwardingTests.configuration($0) }) { fixture async throws in
            let secret = GatewayForwardingTests.encoded(GatewayForwardingTests.joeSecret)
            let relayed = try await HTTP.send(.GET, fixture.base + "/api/x?credentials=\(secret)",
                                              headers: [("traceparent", "00-\(Self.traceID)-\(Self.callerSpan)-01")])
            #expect(relayed.status == 200)
            let seen = try RecordingUpstream.seen(relayed.body)
            let sent = try #require(seen.header("traceparent").flatMap { TraceParent($0) })
            #expect(sent.traceIDHex != Self.traceID)
            let found = try await collector.trace(rootName: "GET /api", spans: 4)
            let (root, spans) = try #require(found)
            #expect(root.traceId == sent.traceIDHex && root.parentSpanId == nil && root.kind == OTLPTraces.Kind.server.rawValue)
            #expect(root.attribute("http.response.status_code") == .int(200) && root.attribute("gatehouse.service") == .string("api"))
            let upstream = try #require(spans.children(of: root).named("GET upstream").first)
            #expect(upstream.spanId == sent.spanIDHex && upstream.kind == OTLPTraces.Kind.client.rawValue)
            #expect(upstream.attribute("http.response.status_code") == .int(200))
            let admission = try #require(spans.children(of: root).named("admission demo").first)
            #expect(!spans.children(of: admission).named("bcrypt verify").isEmpty)
            // A refusal is traced too, with its status.
            let refused = try await HTTP.send(.GET, fixture.base + "/api/y")
            #expect(refused.status == 401)
            let all = try await collector.spans { $0.contains { $0.attribute("http.response.status_code") == .int(401) } }
            #expect(all.contains { $0.name == "GET /api" && $0.attribute("http.response.status_code") == .int(401) })
        }
        await collector.stop()
    }

    /// A collector that cannot be reached costs requests nothing: they are answered, the spans are dropped and counted.
    @Test func anUnreachableCollectorDropsSpansAndFailsNoRequest() async throws {
        var logger = Logger(label: "trace-test")
        logger.logLevel = .critical
        let exporter = OTLPExporter(endpoint: "http://127.0.0.1:1", serviceName: "gatehouse-test", serviceVersion: "test",
                                    interval: .milliseconds(50), timeout: .milliseconds(500), logger: logger)
        try await TestServer.run(tracer: OTLPTracer(exporter: exporter)) { server in
            for _ in 0..<5 { #expect(try await HTTP.send(.GET, server.baseURL + "/health").status == 200) }
            let deadline = ContinuousClock.now + .seconds(10)
            while exporter.counts.dropped < 5, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            #expect(exporter.counts.dropped >= 5 && exporter.counts.exported == 0)
        }
    }
}
