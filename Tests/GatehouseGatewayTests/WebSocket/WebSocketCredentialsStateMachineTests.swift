@testable import GatehouseGateway
import Testing

/// A relayed WebSocket's credentials alone: the deadline, the in-band challenge and its grace, the realm's decision on
/// an answer — with the clock given. Over real connections: GatewayInBandFrameTests, GatewayWebSocketTests.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketCredentialsStateMachineTests {
    static let start = ContinuousClock.now
    static let expiry = WebSocketRelay.Deadline(instant: start.advanced(by: .seconds(60)), reason: "credentials expired")
    static let revalidation = WebSocketCredentialsStateMachine.Revalidation(challenge: #"Basic realm="demo""#, grace: .seconds(30))

    @Test func credentialsWithoutAnExpiryNeverWake() {
        var machine = WebSocketCredentialsStateMachine(deadline: nil, revalidation: Self.revalidation)
        #expect(machine.started() == .none)
        #expect(machine.timerFired(now: Self.start.advanced(by: .seconds(3600))) == .none)
    }

    @Test func withoutRevalidationTheDeadlineCloses() {
        var machine = WebSocketCredentialsStateMachine(deadline: Self.expiry, revalidation: nil)
        #expect(machine.started() == .wake(at: Self.expiry.instant))
        // A timer that fires early looks again at the deadline.
        #expect(machine.timerFired(now: Self.start.advanced(by: .seconds(59))) == .wake(at: Self.expiry.instant))
        #expect(machine.timerFired(now: Self.expiry.instant) == .expire(reason: "credentials expired", revalidationFailed: false))
        #expect(machine.timerFired(now: Self.expiry.instant.advanced(by: .seconds(1))) == .none, "expired once")
    }

    @Test func aRealmThatRevalidatesChallengesOnceThenClosesAfterTheGrace() {
        var machine = WebSocketCredentialsStateMachine(deadline: Self.expiry, revalidation: Self.revalidation)
        let now = Self.expiry.instant
        let graceEnd = now.advanced(by: .seconds(30))
        #expect(machine.timerFired(now: now) == .challenge(#"Basic realm="demo""#, reason: "credentials expired", wakeAt: graceEnd))
        #expect(machine.challenged)
        #expect(machine.timerFired(now: graceEnd) == .expire(reason: "revalidation not answered", revalidationFailed: false))
    }

    @Test func anAcceptedAnswerSetsTheNextDeadline() {
        var machine = WebSocketCredentialsStateMachine(deadline: Self.expiry, revalidation: Self.revalidation)
        _ = machine.timerFired(now: Self.expiry.instant)
        let next = WebSocketRelay.Deadline(instant: Self.start.advanced(by: .seconds(600)), reason: "credentials expired")
        #expect(machine.revalidated(.accepted(Subject(name: "joe", roles: [])), next: next) == .wake(at: next.instant))
        #expect(!machine.challenged)
        // The next deadline challenges again.
        guard case .challenge = machine.timerFired(now: next.instant) else {
            Issue.record("no second challenge")
            return
        }
        // Credentials that never expire: no timer at all.
        #expect(machine.revalidated(.accepted(Subject(name: "joe", roles: [])), next: nil) == .none)
        #expect(machine.timerFired(now: next.instant.advanced(by: .seconds(3600))) == .none)
    }

    @Test func aRefusedAnswerOrAnotherUserCloses() {
        var refused = WebSocketCredentialsStateMachine(deadline: Self.expiry, revalidation: Self.revalidation)
        _ = refused.timerFired(now: Self.expiry.instant)
        #expect(refused.revalidated(.refused, next: nil) == .expire(reason: "revalidation failed", revalidationFailed: true))
        #expect(refused.timerFired(now: Self.expiry.instant.advanced(by: .seconds(31))) == .none)
        var other = WebSocketCredentialsStateMachine(deadline: Self.expiry, revalidation: Self.revalidation)
        #expect(other.revalidated(.differentUser, next: nil) == .expire(reason: "revalidation changed the user", revalidationFailed: true))
        // Without revalidation an answer is not one (never forwarded, never decided).
        var plain = WebSocketCredentialsStateMachine(deadline: Self.expiry, revalidation: nil)
        #expect(plain.revalidated(.refused, next: nil) == .none)
    }
}
