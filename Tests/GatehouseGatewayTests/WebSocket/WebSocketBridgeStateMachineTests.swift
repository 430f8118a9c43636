@testable import GatehouseGateway
import Testing

/// A relayed WebSocket's sides alone: the upstream's connection, the close handshake end to end, the end of the
/// bridge. Over real connections (frames on the wire): GatewayWebSocketTests, GatewayClientBytesTests,
/// KaazingHandshakeTests, KaazingEmulationTests.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketBridgeStateMachineTests {
    /// Both sides attached and the upstream upgraded.
    static func relaying() -> WebSocketBridgeStateMachine {
        var machine = WebSocketBridgeStateMachine()
        _ = machine.attached(.client)
        _ = machine.attached(.upstream)
        _ = machine.upstreamReady()
        return machine
    }

    @Test func theClientStartsTheRelayAndItsFramesWaitForTheUpstream() {
        var machine = WebSocketBridgeStateMachine()
        let result1 = machine.attached(.client)
        #expect(result1 == .start)
        let result2 = machine.attached(.client)
        #expect(result2 == .none, "started once")
        #expect(machine.upstream == .connecting)
        #expect(machine.arrival(from: .client) == .hold)
        let result3 = machine.attached(.upstream)
        #expect(result3 == .none)
        let result4 = machine.upstreamReady()
        #expect(result4)
        #expect(machine.upstream == .relaying)
        #expect(machine.arrival(from: .client) == .relay)
        #expect(machine.arrival(from: .upstream) == .relay)
    }

    @Test func anUnreachableUpstreamClosesTheClientOnce() {
        var machine = WebSocketBridgeStateMachine()
        _ = machine.attached(.client)
        let result5 = machine.upstreamFailed()
        #expect(result5)
        let result6 = machine.upstreamFailed()
        #expect(result6 == false, "once")
        let result7 = machine.sendClose(to: .client)
        #expect(result7, "1011 to the client")
        let result8 = machine.closed(.client)
        #expect(result8 == .none)
        let finish = machine.finish()
        #expect(finish?.counted == true)
        #expect(finish?.dropUpstreamConnection == false)
        let result9 = machine.finish()
        #expect(result9 == nil, "finished once")
        #expect(machine.arrival(from: .client) == .drop)
    }

    @Test func aClientLeavingWhileTheUpstreamConnectsDropsThatConnection() {
        var machine = WebSocketBridgeStateMachine()
        _ = machine.attached(.client)
        let result10 = machine.closed(.client)
        #expect(result10 == .dropUpstreamConnection)
        let result11 = machine.finish()
        #expect(result11?.dropUpstreamConnection == true)
        // The upstream's side, set up after all, is closed at once.
        let result12 = machine.attached(.upstream)
        #expect(result12 == .closeIt)
        let result13 = machine.upstreamReady()
        #expect(result13 == false)
        #expect(machine.upstream == .ended)
    }

    @Test func aCloseFromOneSideIsAnsweredByTheOtherThroughTheBridge() {
        var machine = Self.relaying()
        // The client starts: its close goes upstream.
        let result14 = machine.closeReceived(from: .client)
        #expect(result14 == .relayToOther)
        #expect(!machine.mayWrite(to: .upstream), "nothing after the close")
        #expect(machine.mayWrite(to: .client), "the answer still goes to the client")
        // The upstream answers: relayed back to the client, which then closes.
        let result15 = machine.closeReceived(from: .upstream)
        #expect(result15 == .answered(relayToOther: true))
        #expect(!machine.mayWrite(to: .client))
        let result16 = machine.closed(.upstream)
        #expect(result16 == .closeOther)
        let result17 = machine.sendClose(to: .client)
        #expect(result17 == false, "it had its close")
        let result18 = machine.closed(.client)
        #expect(result18 == .none)
        let result19 = machine.finish()
        #expect(result19 != nil)
    }

    @Test func aCloseWithNobodyToRelayItToIsAnsweredByTheBridge() {
        var machine = Self.relaying()
        let result20 = machine.closed(.upstream)
        #expect(result20 == .closeOther)
        let result21 = machine.sendClose(to: .client)
        #expect(result21)
        // The client answers the bridge's close: its handshake is complete, nothing to relay.
        let result22 = machine.closeReceived(from: .client)
        #expect(result22 == .answered(relayToOther: false))
        var other = WebSocketBridgeStateMachine()
        _ = other.attached(.client)
        _ = other.upstreamFailed()
        let result23 = other.closeReceived(from: .client)
        #expect(result23 == .answerItself)
        let result24 = other.sendClose(to: .client)
        #expect(result24 == false, "the answer was its close")
    }

    @Test func theBridgeEndsOnlyWhenBothSidesClosed() {
        var machine = Self.relaying()
        let result25 = machine.closed(.client)
        #expect(result25 == .closeOther)
        let result26 = machine.finish()
        #expect(result26 == nil)
        let result27 = machine.closed(.upstream)
        #expect(result27 == .none)
        let result28 = machine.finish()
        #expect(result28 != nil)
    }
}
