import Foundation
import GatehouseGateway
import Testing

/// Slowloris: a connection that sends half a request, dribbles its head, or sits idle is closed in bounded time.
@Suite(.timeLimit(.minutes(3))) struct GatewayTimeoutTests {
    /// A gateway whose first request head must arrive within 1.5 s and whose keep-alive connections may idle 1.5 s
    /// (short, with room for a loaded machine).
    static func configuration(_ upstream: String, headerReadTimeout: Double = 1.5) -> GatewayConfiguration {
        GatewayConfiguration(services: [ServiceConfiguration(name: "open", path: "/open", upstream: upstream + "/o", webSocket: true)],
                             headerReadTimeout: headerReadTimeout, idleTimeout: 1.5)
    }

    /// Waits until the gateway closes `connection`; how long that took (fails after 10 s).
    static func timeUntilClosed(_ connection: RawHTTPConnection) async -> Duration? {
        let start = ContinuousClock.now
        let (_, closed) = await connection.readToEnd()
        return closed ? ContinuousClock.now - start : nil
    }

    @Test(.timeLimit(.minutes(3))) func halfARequestLineIsDisconnectedWithinTheHeaderReadTimeout() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let start = ContinuousClock.now
            let connection = try RawHTTPConnection(port: fixture.port)
            await connection.send("GET /op")
            let (bytes, closed) = await connection.readToEnd()
            #expect(closed)
            let answer = RawHTTPResponse(bytes)
            #expect(answer?.status == 408)
            #expect(answer?.json?["error"] == "invalid_request")
            #expect(ContinuousClock.now - start < .seconds(9))
            #expect(ContinuousClock.now - start >= .milliseconds(1400))
            // A connection that sends nothing at all is closed just the same.
            let silent = try RawHTTPConnection(port: fixture.port)
            #expect(await Self.timeUntilClosed(silent).map { $0 < .seconds(9) } == true)
        }
    }

    @Test(.timeLimit(.minutes(3))) func aDribbledHeadIsCutOffEvenThoughBytesKeepComing() async throws {
        try await RecordingFixture.run({ Self.configuration($0) }) { fixture async throws in
            let connection = try RawHTTPConnection(port: fixture.port)
            let start = ContinuousClock.now
            var stillOpen = true
            // One byte every 100 ms: the head would take ~6 s; the gateway stops waiting at 1.5 s.
            for byte in "GET /open/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1234567890\r\n\r\n".utf8 {
                guard await connection.send([byte]) else { stillOpen = false; break }
                try await Task.sleep(for: .milliseconds(100))
                if ContinuousClock.now - start > .seconds(5) { break }
            }
            if stillOpen {
                // The writes may still have been accepted by the kernel; the gateway must have closed by now.
                #expect(await Self.timeUntilClosed(connection).map { _ in ContinuousClock.now - start < .seconds(9) } == true)
            }
            #expect(ContinuousClock.now - start < .seconds(9))
        }
    }

    @Test(.timeLimit(.minutes(3))) func anIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        // A generous header-read timeout: this test is about the idle timeout, and its first head arrives in two
        // parts (a loaded machine must not turn that into a 408).
        try await RecordingFixture.run({ Self.configuration($0, headerReadTimeout: 8) }) { fixture async throws in
            let connection = try RawHTTPConnection(port: fixture.port)
            // A head that arrives in time, in two parts, is served; the connection stays open for another request.
            await connection.send("GET /open/a HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            try await Task.sleep(for: .milliseconds(200))
            await connection.send("\r\n")
            let first = await connection.readResponse()
            #expect(first?.status == 200)
            await connection.send("GET /open/b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let second = await connection.readResponse()
            #expect(second?.status == 200)
            #expect(second.flatMap { try? RecordingUpstream.seen($0.body) }?.target == "/o/b")
            // Then idle: closed after about 1.5 s.
            let idle = await Self.timeUntilClosed(connection)
            #expect(idle.map { $0 >= .milliseconds(1300) && $0 < .seconds(9) } == true, "\(String(describing: idle))")
            // A later request's head that stalls is cut off by the idle timeout too.
            let stalling = try RawHTTPConnection(port: fixture.port)
            await stalling.send("GET /open/c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(await stalling.readResponse()?.status == 200)
            await stalling.send("GET /open/d HTT")
            #expect(await Self.timeUntilClosed(stalling).map { $0 < .seconds(9) } == true)
        }
    }

    @Test(.timeLimit(.minutes(3))) func onAKeptConnectionTheReadTimeoutCountsFromTheRequest() async throws {
        try await GatewayUpstreamAnswerTests.withGateway(upstreamReadTimeout: 1) { port, upstream in
            let kept = try RawHTTPConnection(port: port, timeout: .seconds(10))
            _ = await kept.send("GET /s/length HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await kept.readResponse()?.status == 200)
            // The kept upstream connection sits idle most of the timeout, then carries a request it never answers:
            // 504 a whole timeout after the request (not at the end of the idle one's), and never sent again.
            try await Task.sleep(for: .milliseconds(900))
            let sent = ContinuousClock.now
            _ = await kept.send("GET /s/silent HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await kept.readResponse()?.status == 504)
            let waited = ContinuousClock.now - sent
            #expect(waited >= .milliseconds(900) && waited < .seconds(8), "\(waited)")
            #expect(upstream.targets.filter { $0 == "/s/silent" }.count == 1, "\(upstream.targets)")
        }
    }

    @Test(.timeLimit(.minutes(3))) func anUpstreamSilentPastTheReadTimeoutCostsItsConnection() async throws {
        try await GatewayUpstreamAnswerTests.withGateway(upstreamReadTimeout: 1) { port, _ in
            // Silent before answering: 504 after about the timeout (checked every quarter of it), not never, and not
            // sent again (the upstream may be working on it).
            let start = ContinuousClock.now
            let silent = try await GatewayUpstreamAnswerTests.readToEnd(port: port, after: "GET /s/silent HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let waited = ContinuousClock.now - start
            #expect(GatewayUpstreamAnswerTests.head(silent.bytes).hasPrefix("HTTP/1.1 504 Gateway Timeout"))
            #expect(waited >= .milliseconds(900) && waited < .seconds(8), "\(waited)")
            // Silent mid-answer: what came is relayed, then the client's connection ends (its answer cannot complete).
            let stalled = try await GatewayUpstreamAnswerTests.readToEnd(port: port, after: "GET /s/stalls HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(GatewayUpstreamAnswerTests.head(stalled.bytes).hasPrefix("HTTP/1.1 200 "))
            #expect(String(decoding: stalled.bytes, as: UTF8.self).hasSuffix("\r\n\r\nhalf"))
            #expect(stalled.closed)
            // A head alone, its small body never coming: the head (held a moment for the body, to go in one write
            // with it) is relayed all the same.
            let headAlone = try await GatewayUpstreamAnswerTests.readToEnd(port: port, after: "GET /s/head HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(String(decoding: headAlone.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n"))
            #expect(String(decoding: headAlone.bytes, as: UTF8.self).hasSuffix("\r\n\r\n"))
            #expect(headAlone.closed)
            // The gateway goes on.
            let fine = try await GatewayUpstreamAnswerTests.readToEnd(port: port, after: "GET /s/length HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(GatewayUpstreamAnswerTests.head(fine.bytes).hasPrefix("HTTP/1.1 200 "))
        }
    }

    @Test(.timeLimit(.minutes(3))) func timeoutsAreConfigurable() throws {
        let configuration = try GatewayConfiguration.decode(yaml: "headerReadTimeout: 2.5\nidleTimeout: 30\nupstreamReadTimeout: 45\ntrustedProxies: [10.0.0.1]\n")
        #expect(configuration.headerReadTimeout == 2.5)
        #expect(configuration.idleTimeout == 30)
        #expect(configuration.upstreamReadTimeout == 45)
        #expect(configuration.trustedProxies == ["10.0.0.1"])
        #expect(try GatewayConfiguration.decode(yaml: "port: 1\n").headerReadTimeout == nil)  // 10 s and 60 s by default
        for bad in [GatewayConfiguration(headerReadTimeout: 0), GatewayConfiguration(idleTimeout: -1), GatewayConfiguration(idleTimeout: .infinity),
                    GatewayConfiguration(upstreamReadTimeout: 0)] {
            #expect(throws: GatewayConfigurationError.self) { _ = try Gateway(configuration: bad) }
        }
    }
}
