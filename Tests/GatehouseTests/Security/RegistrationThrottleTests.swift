import Foundation
import GatehouseChecks
import GatehouseProtocol
@testable import GatehouseServer
import Testing

/// Self-registration is throttled per source address (a registration flood would otherwise reset MobileFirst's
/// per-registration counters at will, or fill the store).
@Suite(.timeLimit(.minutes(1))) struct RegistrationThrottleTests {
    @Test func theAddressOverItsAllowanceGets429UntilTheWindowEnds() async throws {
        let policy = TestPolicies.standard.replacingOccurrences(
            of: "registrationThrottle: { perAddress: 0 }", with: "registrationThrottle: { perAddress: 3, windowSec: 120 }")
        try await TestServer.run(policy: policy) { server in
            let key = try ClientKeyPair()
            for _ in 0..<3 { #expect(try await ProtocolClient(server, key: key).registerRequest().status == 201) }
            let refused = try await ProtocolClient(server, key: key).registerRequest()
            #expect(refused.status == 429)
            #expect(refused.json?["errorCode"] == "TOO_MANY_REGISTRATIONS")
            #expect(refused.header("Retry-After") == "120")
        }
    }

    @Test func theAllowanceComesBackWithTheNextWindow() {
        let throttle = RegistrationThrottle(limit: 2, window: 1_000)
        #expect(throttle.admit("10.0.0.1", now: 0))
        #expect(throttle.admit("10.0.0.1", now: 10))
        #expect(!throttle.admit("10.0.0.1", now: 20))
        #expect(throttle.admit("10.0.0.2", now: 30))   // another address is not affected
        #expect(throttle.admit("10.0.0.1", now: 1_000))
    }

    @Test func theDefaultPolicyThrottles() throws {
        let policy = try SecurityPolicy.parse(yaml: "applications: [{ id: a, platform: ios }]", file: "p.yaml", registry: .builtIn,
                                              services: SecurityCheckServices(users: PolicyTests.NoUsers()))
        #expect(policy.registrationThrottle?.count == 300)
        #expect(policy.registrationThrottle?.window == 60_000)
    }
}
