import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// Hostile input round 3, findings 5 and 9 (issue 54). 5: KAAZING's bridge page (`/?.kr=xs`) was an open cross-origin
/// reader when a WebSocket service left `allowedOrigins` unset (`allowed = null`, `frame-ancestors *`) and sent any
/// path of its origin: a page of another origin framed it and read an unrelated HTTP service's body. Now it serves
/// only the origins services name, and only the emulated transport's requests — in the page's script and, for what
/// a script cannot be trusted with, at the gateway (a request bearing the bridge's `X-Origin` that is no emulation
/// request is refused). 9: an emulated session's origin was checked at its create only; its upstream and downstream
/// requests with another `Origin` were answered.
@Suite(.timeLimit(.minutes(3))) struct KaazingBridgeOriginTests {
    static let page = KaazingEmulationTests.page

    static func configuration(_ upstream: String, named: Bool) -> GatewayConfiguration {
        GatewayConfiguration(services: [
            ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", webSocket: true, allowedOrigins: named ? [page] : nil),
            ServiceConfiguration(name: "api", path: "/api", upstream: upstream + "/v1"),
        ])
    }

    static func script(_ page: RawHTTPResponse) -> String {
        let html = page.text
        guard let start = html.range(of: "<script>"), let end = html.range(of: "</script>") else { return "" }
        return String(html[start.upperBound..<end.lowerBound])
    }

    @Test func aServiceWithoutAllowedOriginsLendsNoOriginTheBridge() async throws {
        try await RecordingFixture.run({ Self.configuration($0, named: false) }) { fixture in
            let page = try await RawHTTPConnection.exchange(port: fixture.port, target: "/?.kr=xs")
            #expect(page.status == 200)
            #expect(page.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true, "\(page.header("Content-Security-Policy") ?? "")")
            #expect(Self.script(page).contains("var allowed = [];"))
            #expect(!Self.script(page).contains("allowed !== null"))
        }
    }

    @Test func theBridgeSendsTheEmulationsRequestsOnlyAndASessionStaysWithItsOrigin() async throws {
        try await RecordingFixture.run({ Self.configuration($0, named: true) }) { fixture in
            let page = try await RawHTTPConnection.exchange(port: fixture.port, target: "/?.kr=xs")
            #expect(page.header("Content-Security-Policy")?.hasSuffix("frame-ancestors \(Self.page)") == true, "\(page.header("Content-Security-Policy") ?? "")")
            // Every encoding's create, upstream and downstream (a ctm create is handed back utm and dtm URLs), no other path.
            #expect(Self.script(page).contains(#"["cb","cbm","ct","cte","ctem","ctm","db","dbm","dt","dte","dtem","dtm","ub","ubm","ut","ute","utem","utm"].indexOf(segments[marker + 1])"#))
            // What the bridge sends to another service of its origin (its X-Origin on it) is refused at the gateway.
            let direct = try await RawHTTPConnection.exchange(port: fixture.port, target: "/api/secret")
            #expect(direct.status == 200, "the service answers its own callers")
            for method in ["GET", "POST"] {
                let bridged = try await RawHTTPConnection.exchange(port: fixture.port, target: Array("/api/secret".utf8), method: method,
                                                                   headers: ["X-Origin: \(Self.page)", "X-Next-Protocol: httpxe/1.1", "Content-Length: 0"])
                #expect(bridged.status == 403, "\(method): \(bridged.status) \(bridged.text)")
            }
            // Finding 9: a session opened by the page answers requests of that origin only.
            let created = try await EmulationWire.create(port: fixture.port, sequence: 0)
            let (upstream, downstream) = try EmulationWire.locations(created, port: fixture.port)
            let nop = KaazingEmulation.encode(.command(.reconnect))
            for origin: String? in ["http://evil.example", "http://app.example:8081", nil] {
                #expect(try await EmulationWire.upstream(port: fixture.port, path: upstream, sequence: 1, frames: nop, origin: origin).status == 403,
                        "upstream from \(origin ?? "no origin")")
                let foreign = try await RawHTTPConnection.exchange(port: fixture.port, target: downstream + "?.ksn=1",
                                                                   headers: origin.map { ["X-Origin: \($0)"] } ?? [])
                #expect(foreign.status == 403, "downstream from \(origin ?? "no origin"): \(foreign.status)")
            }
            // Its own origin still works.
            let stream = try await EmulationWire.downstream(port: fixture.port, path: downstream, sequence: 1)
            guard case .text = try await stream.frame() else { throw TestFailure("no upstream frame") }
            #expect(try await EmulationWire.upstream(port: fixture.port, path: upstream, sequence: 1, frames: nop).status == 200)
            let close = KaazingEmulation.encode(.command(.close)) + KaazingEmulation.encode(.command(.reconnect))
            #expect(try await EmulationWire.upstream(port: fixture.port, path: upstream, sequence: 2, frames: close).status == 200)
        }
    }
}
