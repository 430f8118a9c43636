@testable import GatehouseGateway
import Testing

/// One relayed exchange's decisions alone: no socket, no upstream. The same behaviours over real connections:
/// GatewayUnitTests (a stale pooled connection retried), GatewayTimeoutTests (`504` never retried), GatewayClientBytesTests
/// (bodies held, relayed, dropped), HTTP10Tests (an answer without a length ends the connection).
@Suite(.timeLimit(.minutes(1)))
struct GatewayExchangeStateMachineTests {
    static func relaying(keepAlive: Bool = true, requestEnded: Bool = true, retriable: Bool = true, reused: Bool = false)
        -> GatewayExchangeStateMachine
    {
        var machine = GatewayExchangeStateMachine(keepAlive: keepAlive, requestEnded: requestEnded, retriable: retriable)
        machine.connecting()
        machine.attached(reused: reused)
        return machine
    }

    @Test func aBodyIsHeldUntilTheUpstreamIsReadyThenRelayedAndDroppedOnceAnswered() {
        var machine = GatewayExchangeStateMachine(keepAlive: true, requestEnded: false, retriable: false)
        #expect(machine.holdsReads(pipelined: false, upstreamWritable: true), "admission under way")
        #expect(machine.progress == .readingBody(held: true))
        #expect(machine.bodyRead(ended: false) == .hold)
        machine.connecting()
        #expect(machine.bodyRead(ended: false) == .hold)
        machine.attached(reused: false)
        #expect(!machine.holdsReads(pipelined: false, upstreamWritable: true))
        #expect(machine.holdsReads(pipelined: false, upstreamWritable: false), "the upstream's socket is full")
        #expect(machine.progress == .readingBody(held: false))
        #expect(machine.bodyRead(ended: false) == .forward)
        // The gateway answers before the body's end: the rest is dropped, the reads go on.
        let answering = machine.answering()
        #expect(answering)
        #expect(machine.bodyRead(ended: false) == .drop)
        #expect(!machine.holdsReads(pipelined: false, upstreamWritable: false))
        let dropRest = machine.answerEnded()
        #expect(dropRest, "the request is not whole: its rest is read and dropped")
        #expect(!machine.isComplete)
        #expect(machine.bodyRead(ended: true) == .drop)
        #expect(machine.isComplete && machine.progress == .requestRead)
        #expect(!machine.keepsUpstream)
    }

    @Test func aCompleteExchangeKeepsItsUpstreamOnlyWhenTheUpstreamKeepsAlive() {
        var machine = Self.relaying()
        machine.answerStarted(endsByClose: false, lengthKnown: true, clientIsHTTP10: false, upstreamKeepsAlive: true)
        #expect(!machine.keepsUpstream, "not before the answer's end")
        machine.upstreamAnswerEnded(reusable: true)
        let dropped = machine.answerEnded()
        #expect(!dropped)
        #expect(machine.isComplete && machine.keepsUpstream && machine.keepAlive)

        var closing = Self.relaying()
        closing.answerStarted(endsByClose: false, lengthKnown: true, clientIsHTTP10: false, upstreamKeepsAlive: false)
        closing.upstreamAnswerEnded(reusable: true)
        _ = closing.answerEnded()
        #expect(!closing.keepsUpstream && closing.keepAlive, "the upstream said close; the client's connection stays")

        var unreusable = Self.relaying()
        unreusable.answerStarted(endsByClose: false, lengthKnown: true, clientIsHTTP10: false, upstreamKeepsAlive: true)
        unreusable.upstreamAnswerEnded(reusable: false)
        _ = unreusable.answerEnded()
        #expect(!unreusable.keepsUpstream)
    }

    @Test func anAnswerWithoutALengthEndsTheClientsConnectionWhenItMust() {
        var byClose = Self.relaying()
        byClose.answerStarted(endsByClose: true, lengthKnown: false, clientIsHTTP10: false, upstreamKeepsAlive: true)
        #expect(!byClose.keepAlive)
        byClose.upstreamAnswerEnded(reusable: true)
        _ = byClose.answerEnded()
        #expect(!byClose.keepsUpstream, "an answer that ends by closing leaves no connection to reuse")
        var chunkedTo10 = Self.relaying()
        chunkedTo10.answerStarted(endsByClose: false, lengthKnown: false, clientIsHTTP10: true, upstreamKeepsAlive: true)
        #expect(!chunkedTo10.keepAlive, "an HTTP/1.0 client learns the end from the close")
        var chunkedTo11 = Self.relaying()
        chunkedTo11.answerStarted(endsByClose: false, lengthKnown: false, clientIsHTTP10: false, upstreamKeepsAlive: true)
        #expect(chunkedTo11.keepAlive)
    }

    @Test func aStaleReusedConnectionIsRetriedOnceForARetriableRequestOnly() {
        var stale = Self.relaying(reused: true)
        #expect(stale.upstreamFailed(timedOut: false) == .retry)
        stale.connecting()
        stale.attached(reused: true)
        #expect(stale.upstreamFailed(timedOut: false) == .unavailable, "once")
        var fresh = Self.relaying(reused: false)
        #expect(fresh.upstreamFailed(timedOut: false) == .unavailable, "a fresh connection that fails is the upstream's fault")
        var post = Self.relaying(retriable: false, reused: true)
        #expect(post.upstreamFailed(timedOut: false) == .unavailable, "a POST the upstream may have taken never runs twice")
        var silent = Self.relaying(reused: true)
        #expect(silent.upstreamFailed(timedOut: true) == .gatewayTimeout, "silent: it may still be working on it")
        var midAnswer = Self.relaying(reused: true)
        midAnswer.answerStarted(endsByClose: false, lengthKnown: true, clientIsHTTP10: false, upstreamKeepsAlive: true)
        #expect(midAnswer.upstreamFailed(timedOut: false) == .cutOff)
        let answered = midAnswer.answering()
        #expect(!answered, "nothing more can be said once an answer has begun")
    }

    @Test func aMalformedBodyIsAnswered400OrEndsTheConnection() {
        var early = GatewayExchangeStateMachine(keepAlive: true, requestEnded: false, retriable: false)
        #expect(early.bodyMalformed() == .answer)
        #expect(early.bodyFailed && !early.keepAlive)
        var late = Self.relaying(requestEnded: false)
        late.answerStarted(endsByClose: false, lengthKnown: true, clientIsHTTP10: false, upstreamKeepsAlive: true)
        #expect(late.bodyMalformed() == .close)
    }

    @Test func aCompleteRequestHoldsReadsOnlyForAPipelinedOne() {
        let machine = GatewayExchangeStateMachine(keepAlive: true, requestEnded: true, retriable: true)
        #expect(!machine.holdsReads(pipelined: false, upstreamWritable: true))
        #expect(machine.holdsReads(pipelined: true, upstreamWritable: true))
        #expect(machine.progress == .requestRead)
    }
}
