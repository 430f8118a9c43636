@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// KAAZING's extensions' wire format (``KaazingExtensions``), their negotiation (``KaazingExtensionsNegotiation``) and
/// the keep-alive's decisions (``WebSocketKeepAliveStateMachine``), alone, on given instants.
@Suite(.timeLimit(.minutes(1))) struct KaazingKeepAliveTests {
    @Test func announcesAsKaazingDoes() {
        #expect(KaazingExtensions.pingPongOffer == "x-kaazing-ping-pong; 01010102")
        #expect(KaazingExtensions.idleTimeoutOffer(milliseconds: 2000) == "x-kaazing-idle-timeout; timeout=2000")
        let both = KaazingExtensionsNegotiation(requested: ["permessage-deflate; client_max_window_bits", "X-Kaazing-Idle-Timeout ,x-kaazing-ping-pong"],
                                                inactivityTimeout: .milliseconds(2500))
        #expect(both.announced == ["x-kaazing-idle-timeout; timeout=2500", "x-kaazing-ping-pong; 01010102"])
        // No inactivity timeout: the idle timeout declined (ping-pong still granted); on the emulated transport no ping-pong.
        #expect(KaazingExtensionsNegotiation(requested: ["x-kaazing-idle-timeout, x-kaazing-ping-pong"], inactivityTimeout: nil).announced
                == ["x-kaazing-ping-pong; 01010102"])
        #expect(KaazingExtensionsNegotiation(requested: ["x-kaazing-idle-timeout, x-kaazing-ping-pong"], inactivityTimeout: .seconds(10), emulated: true).announced
                == ["x-kaazing-idle-timeout; timeout=10000"])
        #expect(KaazingExtensionsNegotiation(requested: ["x-webkit-deflate-frame"], inactivityTimeout: .seconds(10)).announced == [])
    }

    @Test func readsAClientsTextAsKaazingsFilterDoes() {
        let control = KaazingExtensions.controlBytes
        #expect(KaazingExtensions.clientText(prefix: control, length: 4) == .escape)
        #expect(KaazingExtensions.clientText(prefix: control + [0x09, 0x00], length: 6) == .ping)
        #expect(KaazingExtensions.clientText(prefix: control + [0x0A, 0x00], length: 6) == .pong)
        #expect(KaazingExtensions.clientText(prefix: control + [0x0A, 0x01], length: 6) == .invalid)
        #expect(KaazingExtensions.clientText(prefix: control + [0x41], length: 5) == .invalid)
        #expect(KaazingExtensions.clientText(prefix: [0x01, 0x01, 0x01], length: 3) == .data)
        #expect(KaazingExtensions.clientText(prefix: Array("ABCDEF".utf8), length: 6) == .data)
    }

    @Test func pingsAfterHalfAndClosesAfterTheWholeTimeout() {
        let start = ContinuousClock.now
        var machine = WebSocketKeepAliveStateMachine(inactivityTimeout: .seconds(2), pongs: false, now: start)
        #expect(machine.nextWake == start + .seconds(1))
        #expect(machine.timerFired(now: start + .milliseconds(999)) == [])
        #expect(machine.timerFired(now: start + .seconds(1)) == [.ping])
        machine.pongRead(now: start + .milliseconds(1100))
        #expect(machine.nextWake == start + .milliseconds(2100))
        #expect(machine.timerFired(now: start + .milliseconds(2100)) == [.ping])
        // Data, but no pong: still closed half a timeout after the last read.
        machine.read(now: start + .milliseconds(2500))
        #expect(machine.timerFired(now: start + .milliseconds(3100)) == [])
        #expect(machine.timerFired(now: start + .milliseconds(3500)) == [.close])
        #expect(machine.nextWake == nil)
    }

    @Test func pongsWhenItWroteNothingForThreeQuarters() {
        let start = ContinuousClock.now
        var machine = WebSocketKeepAliveStateMachine(inactivityTimeout: .seconds(2), pongs: true, now: start)
        machine.read(now: start + .milliseconds(900))
        #expect(machine.nextWake == start + .milliseconds(1500))
        #expect(machine.timerFired(now: start + .milliseconds(1500)) == [.pong])
        machine.read(now: start + .milliseconds(1800))
        machine.wrote(now: start + .milliseconds(2000))
        #expect(machine.nextWake == start + .milliseconds(2800))
        #expect(machine.timerFired(now: start + .milliseconds(2800)) == [.ping])
        // Half a timeout after the ping, unanswered: closed (the ping was a write, so no pong came before that).
        #expect(machine.nextWake == start + .milliseconds(3800))
        #expect(machine.timerFired(now: start + .milliseconds(3800)) == [.close])
    }

    /// The emulated transport: no ping (its session would answer it), a pong every three quarters of the timeout.
    @Test func pongsOnlyWithoutPings() {
        let start = ContinuousClock.now
        var machine = WebSocketKeepAliveStateMachine(inactivityTimeout: .seconds(2), pings: false, pongs: true, now: start)
        #expect(machine.nextWake == start + .milliseconds(1500))
        #expect(machine.timerFired(now: start + .milliseconds(1500)) == [.pong])
        #expect(machine.timerFired(now: start + .milliseconds(3000)) == [.pong])
        #expect(machine.nextWake == start + .milliseconds(4500))
    }
}
