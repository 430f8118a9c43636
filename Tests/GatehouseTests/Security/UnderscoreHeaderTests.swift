import Foundation
import GatehouseGateway
import Testing

/// Hostile input round 2, finding 9: header names with `_` (`X_Gateway_User`) were forwarded to upstreams that fold
/// `_` into `-` (WSGI, PHP, CGI), which would read them as the gateway's own `X-Gateway-User`. Dropped, as nginx does.
@Suite(.timeLimit(.minutes(3))) struct UnderscoreHeaderTests {
    @Test func aNameWithAnUnderscoreNeverReachesTheUpstream() async throws {
        try await RecordingFixture.run({ upstream in
            GatewayConfiguration(services: [ServiceConfiguration(name: "open", path: "/", upstream: upstream)])
        }) { fixture in
            let answer = try await RawHTTPConnection.exchange(port: fixture.port, target: "/x",
                                                              headers: ["X_Gateway_User: admin", "My_Header: 1", "X-Kept: yes"])
            #expect(answer.status == 200)
            let seen = try RecordingUpstream.seen(answer.body)
            #expect(seen.header("x_gateway_user") == nil)
            #expect(seen.header("my_header") == nil)
            #expect(seen.header("x-gateway-user") == nil)
            #expect(seen.header("x-kept") == "yes")
        }
    }
}
