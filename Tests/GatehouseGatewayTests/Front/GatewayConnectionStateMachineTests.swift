@testable import GatehouseGateway
import NIOCore
import Testing

/// A gateway connection's life alone: no socket, no timer, the clock given with every event. The same behaviours over
/// real connections: GatewayTimeoutTests, DribbledHeadTests, GracefulShutdownTests, GatewayClientBytesTests; the
/// handler on an `EmbeddedChannel`: GatewayHTTPHandlerTests.
@Suite(.timeLimit(.minutes(1)))
struct GatewayConnectionStateMachineTests {
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let idle = TimeAmount.seconds(60)
    static let head = TimeAmount.seconds(10)

    static func machine() -> GatewayConnectionStateMachine {
        GatewayConnectionStateMachine(idleTimeout: idle, headTimeout: head, now: start)
    }

    @Test func theFirstHeadIsDueFromTheOpeningHoweverItsBytesDribble() {
        var machine = Self.machine()
        let due = machine.opened(now: Self.start)
        #expect(due == Self.start + Self.head)
        let again = machine.opened(now: Self.start + .seconds(1))
        #expect(again == nil, "timed once")
        // A byte now and then is activity, but not a head.
        for second in 1...9 { machine.read(now: Self.start + .seconds(Int64(second))) }
        let arriving = machine.headArriving(now: Self.start + .seconds(2))
        #expect(arriving == nil, "the first head is timed from the opening")
        #expect(machine.timerFired(now: Self.start + .seconds(5), .none) == .reschedule(Self.start + Self.head))
        #expect(machine.timerFired(now: Self.start + Self.head, .none) == .headTimedOut)
    }

    @Test func aHeadInTimeLeavesTheIdleTimeout() {
        var machine = Self.machine()
        _ = machine.opened(now: Self.start)
        machine.read(now: Self.start + .seconds(1))
        let read = machine.headRead(keepAlive: true)
        #expect(read.keepAlive && read.first)
        let closes = machine.answerEnded(keepAlive: true, now: Self.start + .seconds(2))
        #expect(closes == false)
        // The head timer fires later: now the idle timeout counts, from the answer's end.
        #expect(machine.timerFired(now: Self.start + Self.head, .none) == .reschedule(Self.start + .seconds(2) + Self.idle))
        #expect(machine.timerFired(now: Self.start + .seconds(2) + Self.idle, .none) == .closeIdle)
        let second = machine.headRead(keepAlive: true)
        #expect(second.first == false)
    }

    @Test func aLaterHeadIsDueFromItsFirstByte() {
        var machine = Self.machine()
        _ = machine.opened(now: Self.start)
        _ = machine.headRead(keepAlive: true)
        _ = machine.answerEnded(keepAlive: true, now: Self.start + .seconds(1))
        let first = Self.start + .seconds(30)
        let due = machine.headArriving(now: first)
        #expect(due == first + Self.head)
        // Dribbled: activity all along, still due from its first byte.
        machine.read(now: first + .seconds(9))
        let again = machine.headArriving(now: first + .seconds(9))
        #expect(again == nil)
        #expect(machine.timerFired(now: first + Self.head, .none) == .headTimedOut)
    }

    @Test func anExchangeWaitingForItsUpstreamNeverIdlesOut() {
        var machine = Self.machine()
        _ = machine.opened(now: Self.start)
        _ = machine.headRead(keepAlive: true)
        let late = Self.start + Self.idle * 3
        #expect(machine.timerFired(now: late, .requestRead) == .reschedule(late + Self.idle))
        #expect(machine.timerFired(now: late, .readingBody(held: true)) == .reschedule(late + Self.idle))
        // A body that stalls while it is read does.
        #expect(machine.timerFired(now: late, .readingBody(held: false)) == .closeIdle)
        machine.read(now: late)
        #expect(machine.timerFired(now: late + .seconds(1), .readingBody(held: false)) == .reschedule(late + Self.idle))
    }

    @Test func gracefulShutdownClosesAnIdleConnectionAtOnceAndABusyOneAfterItsAnswer() {
        var idle = Self.machine()
        let closesNow = idle.quiesce(exchangeUnderWay: false)
        #expect(closesNow)
        var busy = Self.machine()
        _ = busy.headRead(keepAlive: true)
        let closesBusy = busy.quiesce(exchangeUnderWay: true)
        #expect(closesBusy == false)
        #expect(busy.closesAfter(keepAlive: true), "the answer says Connection: close")
        let closes = busy.answerEnded(keepAlive: true, now: Self.start)
        #expect(closes)
        // A request read after the shutdown began is the last one.
        let next = busy.headRead(keepAlive: true)
        #expect(next.keepAlive == false)
    }

    @Test func theClientsEndOfInput() {
        let machine = Self.machine()
        #expect(machine.inputClosed(.none) == .close)
        #expect(machine.inputClosed(.requestRead) == .lastExchange)
        #expect(machine.inputClosed(.readingBody(held: false)) == .bodyCutShort)
        #expect(machine.inputClosed(.readingBody(held: true)) == .bodyCutShort)
    }

    @Test func anAnswerWithCloseEndsTheConnection() {
        var machine = Self.machine()
        let read = machine.headRead(keepAlive: false)
        #expect(read.keepAlive == false)
        let closes = machine.answerEnded(keepAlive: false, now: Self.start)
        #expect(closes)
        let closed = machine.close()
        #expect(closed)
        let closedAgain = machine.close()
        #expect(closedAgain == false, "closed once")
        #expect(machine.state == .closing)
        #expect(machine.timerFired(now: Self.start + Self.idle * 2, .none) == .none)
    }

    @Test func anUpgradedConnectionIsNoLongerTimedOrServed() {
        var machine = Self.machine()
        _ = machine.opened(now: Self.start)
        _ = machine.headRead(keepAlive: true)
        machine.upgrading()
        #expect(machine.state == .upgrading)
        #expect(machine.timerFired(now: Self.start + Self.head, .none) == .none)
        machine.handedOver()
        #expect(machine.state == .handedOver)
        #expect(!machine.isServing)
        let closesNow = machine.quiesce(exchangeUnderWay: false)
        #expect(closesNow == false, "the WebSocket's handlers see the shutdown")
        let closed = machine.close()
        #expect(closed)
        machine.handedOver()
        #expect(machine.state == .closing, "a closed connection stays closed")
    }
}
