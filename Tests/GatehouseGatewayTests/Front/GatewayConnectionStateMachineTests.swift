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
        let closesNow = idle.userEvent(.quiesce)
        #expect(closesNow.isClose)
        var busy = Self.machine()
        _ = busy.headRead(keepAlive: true)
        busy.exchangeBegan(Self.exchange())
        let closesBusy = busy.userEvent(.quiesce)
        #expect(closesBusy.isNone)
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
        #expect(machine.phase == .closing)
        #expect(machine.timerFired(now: Self.start + Self.idle * 2, .none) == .none)
    }

    @Test func anUpgradedConnectionIsNoLongerTimedOrServed() {
        var machine = Self.machine()
        _ = machine.opened(now: Self.start)
        _ = machine.headRead(keepAlive: true)
        machine.upgrading()
        #expect(machine.phase == .upgrading)
        #expect(machine.timerFired(now: Self.start + Self.head, .none) == .none)
        machine.handedOver()
        #expect(machine.phase == .handedOver)
        #expect(!machine.isServing)
        let closesNow = machine.userEvent(.quiesce)
        #expect(closesNow.isPassOn, "the WebSocket's handlers see the shutdown")
        let closed = machine.close()
        #expect(closed)
        machine.handedOver()
        #expect(machine.phase == .closing, "a closed connection stays closed")
    }

    // MARK: The exchange, reads and writes, state by state

    /// An exchange for `GET /` (its head read by the connection's reader).
    static func exchange(_ target: String = "/") -> GatewayExchange {
        var reader = GatewayRequestReader()
        reader.append(ByteBuffer(string: "GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n"))
        guard case .head(let head, _) = reader.next(exchangeUnderWay: false, keepsBody: false, allocator: ByteBufferAllocator()) else {
            fatalError("the test's request did not parse")
        }
        return GatewayExchange(head: head, keepAlive: true, requestEnded: true, start: Self.start)
    }

    /// The exchange lives in the serving state: one at a time, gone when it ends, with an upgrade or a close.
    @Test(arguments: [GatewayConnectionStateMachine.Phase.serving, .upgrading, .closing])
    func theExchangeLivesInTheServingState(after phase: GatewayConnectionStateMachine.Phase) {
        var machine = Self.machine(in: .serving)
        #expect(machine.exchange == nil)
        let exchange = Self.exchange("/a")
        machine.exchangeBegan(exchange)
        #expect(machine.exchange === exchange)
        switch phase {
        case .serving: machine.exchangeEnded()
        case .upgrading: machine.upgrading()
        case .handedOver: machine.handedOver()
        case .closing: _ = machine.close()
        }
        #expect(machine.exchange == nil)
        let abandoned = machine.takeAbandonedExchange()
        #expect((abandoned === exchange) == (phase == .closing), "a connection closed with an exchange under way keeps it to let it go")
        #expect(machine.takeAbandonedExchange() == nil, "taken once")
        machine.exchangeBegan(Self.exchange("/b"))
        #expect((machine.exchange != nil) == (phase == .serving), "an exchange begins only while serving")
    }

    /// `machine` taken from serving to `phase` by the events that lead there.
    static func move(_ machine: inout GatewayConnectionStateMachine, to phase: GatewayConnectionStateMachine.Phase) {
        switch phase {
        case .serving: break
        case .upgrading: machine.upgrading()
        case .handedOver:
            machine.upgrading()
            machine.handedOver()
        case .closing: _ = machine.close()
        }
    }

    /// The machine in each phase: serving, upgrading (after a `101`), handed over, closing.
    static func machine(in phase: GatewayConnectionStateMachine.Phase, readHeld: Bool = false) -> GatewayConnectionStateMachine {
        var machine = Self.machine()
        _ = machine.opened(now: Self.start)
        _ = machine.headRead(keepAlive: true)
        if readHeld {
            // A pipelined request behind an exchange under way: the read is held.
            machine.exchangeBegan(Self.exchange())
            _ = machine.readAsked(pipelined: true, upstreamWritable: true)
        }
        Self.move(&machine, to: phase)
        return machine
    }

    /// A read asked while the exchange cannot take more is held only while serving, and goes on when it can.
    @Test(arguments: [
        (GatewayConnectionStateMachine.Phase.serving, true, false),
        (.serving, false, true),
        (.upgrading, true, true),
        (.handedOver, true, true),
        (.closing, true, true),
    ])
    func aReadIsHeldOnlyWhileServing(phase: GatewayConnectionStateMachine.Phase, holds: Bool, passes: Bool) {
        var machine = Self.machine(in: .serving)
        machine.exchangeBegan(Self.exchange())
        Self.move(&machine, to: phase)
        // A request read whole holds the reads while another is pipelined behind it (GatewayExchangeStateMachine).
        let action = machine.readAsked(pipelined: holds, upstreamWritable: true)
        #expect(action == (passes ? .read : .hold))
        #expect(machine.readHeld == !passes)
    }

    /// Between exchanges nothing holds the reads.
    @Test func withoutAnExchangeNothingHoldsTheReads() {
        var machine = Self.machine(in: .serving)
        #expect(machine.readAsked(pipelined: true, upstreamWritable: false) == .read)
    }

    @Test func aHeldReadGoesOnOnceTheExchangeCanTakeMore() {
        var machine = Self.machine(in: .serving, readHeld: true)
        #expect(machine.readHeld)
        let result1 = machine.readsMayResume(holds: true)
        #expect(result1 == false, "still held")
        let result2 = machine.readsMayResume(holds: false)
        #expect(result2)
        #expect(!machine.readHeld)
        let result3 = machine.readsMayResume(holds: false)
        #expect(result3 == false, "passed on once")
    }

    /// A read held when the `101` was written is passed on to the handlers that take over, once.
    @Test(arguments: [true, false])
    func aHeldReadIsHandedOverWithTheConnection(held: Bool) {
        var machine = Self.machine(in: .upgrading, readHeld: held)
        let result4 = machine.handedOver()
        #expect(result4 == held)
        let result5 = machine.handedOver()
        #expect(result5 == false)
        var closed = Self.machine(in: .upgrading, readHeld: held)
        _ = closed.close()
        let result6 = closed.handedOver()
        #expect(result6 == false, "a closed connection is handed to no one")
    }

    @Test func theReadingLoopRunsOnceAtATime() {
        var machine = Self.machine(in: .serving)
        let result7 = machine.processingStarts()
        #expect(result7)
        let result8 = machine.processingStarts()
        #expect(result8 == false, "an answer given from inside the loop does not start it again")
        machine.processingEnded()
        let result9 = machine.processingStarts()
        #expect(result9)
        var closing = Self.machine(in: .closing)
        let started = closing.processingStarts()
        #expect(started == false)
    }

    /// What is written each way is flushed once, when due; nothing is due once the connection no longer serves.
    @Test(arguments: [true, false])
    func writesAreFlushedOnceWhenDue(toClient: Bool) {
        var machine = Self.machine(in: .serving)
        let result10 = machine.flushDue(toClient: toClient)
        #expect(result10 == false)
        machine.wrote(toClient: toClient)
        let result11 = machine.flushDue(toClient: !toClient)
        #expect(result11 == false, "the other way has nothing to flush")
        let result12 = machine.flushDue(toClient: toClient)
        #expect(result12)
        let result13 = machine.flushDue(toClient: toClient)
        #expect(result13 == false)
        machine.wrote(toClient: toClient)
        machine.upgrading()
        let result14 = machine.flushDue(toClient: toClient)
        #expect(result14 == false)
    }

    @Test func anAnswersHeadIsHeldForItsBodyAndTakenOnce() {
        var machine = Self.machine(in: .serving)
        let result15 = machine.takeHeldAnswerHead()
        #expect(result15 == nil)
        machine.holdAnswerHead(ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\n"))
        let result16 = machine.takeHeldAnswerHead()
        #expect(result16 == ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\n"))
        let result17 = machine.takeHeldAnswerHead()
        #expect(result17 == nil)
    }

    @Test func theClientsWritabilityIsKeptWhileServing() {
        var machine = Self.machine(in: .serving)
        #expect(machine.clientWritable)
        _ = machine.clientWritabilityChanged(false)
        #expect(!machine.clientWritable)
        let noExchange = machine.clientWritabilityChanged(true)
        #expect(machine.clientWritable)
        #expect(noExchange.resumes == nil, "no exchange, no upstream to read again")
        let exchange = Self.exchange()
        machine.exchangeBegan(exchange)
        let full = machine.clientWritabilityChanged(false)
        #expect(full.resumes == nil)
        let writable = machine.clientWritabilityChanged(true)
        #expect(writable.resumes === exchange, "the exchange's upstream is read again")
        var upgraded = Self.machine(in: .serving)
        _ = upgraded.clientWritabilityChanged(false)
        upgraded.upgrading()
        #expect(upgraded.clientWritable, "no longer this handler's concern")
    }

    // MARK: The channel's events, state by state

    /// What the client's bytes are for: read into requests while serving (and activity for the idle timeout), kept
    /// after a `101`, passed on once handed over, dropped while closing.
    @Test(arguments: [
        (GatewayConnectionStateMachine.Phase.serving, GatewayConnectionStateMachine.ReadAction.process),
        (.upgrading, .keep),
        (.handedOver, .passOn),
        (.closing, .drop),
    ])
    func theClientsBytes(phase: GatewayConnectionStateMachine.Phase, action: GatewayConnectionStateMachine.ReadAction) {
        var machine = Self.machine(in: phase)
        let later = Self.start + .seconds(7)
        #expect(machine.channelRead(now: later) == action)
        #expect((machine.lastActivity == later) == (phase == .serving))
    }

    /// The end of a burst of reads flushes what went upstream, once, while serving; another handler gets it once
    /// handed over.
    @Test(arguments: [
        (GatewayConnectionStateMachine.Phase.serving, true, GatewayConnectionStateMachine.ReadCompleteAction.flushUpstream),
        (.serving, false, .none),
        (.upgrading, true, .passOn),
        (.handedOver, false, .passOn),
        (.closing, true, .none),
    ])
    func theEndOfAReadBurst(phase: GatewayConnectionStateMachine.Phase, wroteUpstream: Bool, action: GatewayConnectionStateMachine.ReadCompleteAction) {
        var machine = Self.machine(in: .serving)
        if wroteUpstream { machine.wrote(toClient: false) }
        Self.move(&machine, to: phase)
        #expect(machine.channelReadComplete() == action)
        if action == .flushUpstream { #expect(machine.channelReadComplete() == .none, "flushed once") }
    }

    /// The user events: graceful shutdown and the client's end of input, by state and by the exchange's progress.
    @Test func userEventsByStateAndProgress() {
        // Serving, between requests: both close now; another event is passed on.
        var idle = Self.machine(in: .serving)
        #expect(idle.userEvent(.other).isPassOn)
        #expect(idle.userEvent(.inputClosed).isClose)
        // An exchange whose request was read whole: answered, then closed.
        var answering = Self.machine(in: .serving)
        let exchange = Self.exchange()
        answering.exchangeBegan(exchange)
        #expect(answering.userEvent(.inputClosed).lastExchange === exchange)
        // A body still arriving: cut short.
        var reading = Self.machine(in: .serving)
        let posting = Self.exchange()
        posting.state = GatewayExchangeStateMachine(keepAlive: true, requestEnded: false, retriable: false)
        reading.exchangeBegan(posting)
        #expect(reading.userEvent(.inputClosed).isBodyCutShort)
        // Handed over: the handlers that serve the connection see them; closing: nothing more.
        var handedOver = Self.machine(in: .handedOver)
        #expect(handedOver.userEvent(.inputClosed).isPassOn)
        #expect(handedOver.userEvent(.quiesce).isPassOn)
        var closing = Self.machine(in: .closing)
        #expect(closing.userEvent(.inputClosed).isNone)
        #expect(closing.userEvent(.quiesce).isNone)
        #expect(closing.userEvent(.other).isPassOn)
    }

    @Test(arguments: [
        (GatewayConnectionStateMachine.Phase.serving, GatewayConnectionStateMachine.ErrorAction.close),
        (.upgrading, .passOn),
        (.handedOver, .passOn),
        (.closing, .passOn),
    ])
    func anErrorClosesOnlyAServingConnection(phase: GatewayConnectionStateMachine.Phase, action: GatewayConnectionStateMachine.ErrorAction) {
        #expect(Self.machine(in: phase).errorCaught() == action)
    }

    /// The channel's end (or the handler's removal) closes the machine and gives the exchange under way up once.
    @Test func theEndGivesTheExchangeUnderWayUpOnce() {
        var machine = Self.machine(in: .serving)
        let exchange = Self.exchange()
        machine.exchangeBegan(exchange)
        #expect(machine.ended() === exchange)
        #expect(machine.phase == .closing)
        #expect(machine.ended() == nil)
        var handedOver = Self.machine(in: .handedOver)
        #expect(handedOver.ended() == nil)
    }
}

extension GatewayConnectionStateMachine.UserEventAction {
    var isPassOn: Bool { if case .passOn = self { true } else { false } }
    var isClose: Bool { if case .close = self { true } else { false } }
    var isNone: Bool { if case .none = self { true } else { false } }
    var isBodyCutShort: Bool { if case .bodyCutShort = self { true } else { false } }
    var lastExchange: GatewayExchange? { if case .lastExchange(let exchange) = self { exchange } else { nil } }
}

extension GatewayConnectionStateMachine.WritabilityAction {
    var resumes: GatewayExchange? { if case .resumeUpstreamReads(let exchange) = self { exchange } else { nil } }
}
