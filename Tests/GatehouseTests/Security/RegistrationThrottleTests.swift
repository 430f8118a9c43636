import Foundation
import GatehouseChecks
import GatehouseProtocol
@testable import GatehouseServer
import Testing

/// Self-registration is throttled per source address (a registration flood would otherwise reset MobileFirst's
/// per-registration counters at will, or fill the store).
@Suite(.timeLimit(.minutes(3))) struct RegistrationThrottleTests {
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

    /// The allowance used up, the address waits a window from its last registration.
    @Test func theAllowanceComesBackAfterAWindow() async throws {
        let throttle = RegistrationThrottle(limit: 2, window: 1_000) { InMemoryAccountLockouts(policy: $0) }
        #expect(try await throttle.admit("10.0.0.1", now: 0))
        #expect(try await throttle.admit("10.0.0.1", now: 10))
        #expect(try await !throttle.admit("10.0.0.1", now: 20))
        #expect(try await throttle.admit("10.0.0.2", now: 30))   // another address is not affected
        #expect(try await !throttle.admit("10.0.0.1", now: 1_000))
        #expect(try await throttle.admit("10.0.0.1", now: 1_010))
    }

    /// Counted in the store: N nodes allow the limit, not N times it.
    @Test func nodesSharingAStoreShareTheAllowance() async throws {
        let policy = TestPolicies.standard.replacingOccurrences(
            of: "registrationThrottle: { perAddress: 0 }", with: "registrationThrottle: { perAddress: 3, windowSec: 120 }")
        try await NodeCluster.run(policy: policy) { cluster in
            let key = try ClientKeyPair()
            let nodes = cluster.nodes
            for index in 0..<3 { #expect(try await ProtocolClient(nodes[index % 2], key: key).registerRequest().status == 201) }
            for node in nodes { #expect(try await ProtocolClient(node, key: key).registerRequest().status == 429) }
        }
    }

    @Test func theDefaultPolicyThrottles() throws {
        let policy = try SecurityPolicy.parse(yaml: "applications: [{ id: a, platform: ios }]", file: "p.yaml", registry: .builtIn,
                                              services: SecurityCheckServices(users: PolicyTests.NoUsers()))
        #expect(policy.registrationThrottle?.count == 300)
        #expect(policy.registrationThrottle?.window == 60_000)
    }
}
