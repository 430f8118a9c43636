import GatehouseHTTP
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The listener's side of the ``DescriptorBudget``: accepted connections counted until they close, reads held while
/// the accept level is reached and passed on when a connection closes; outbound connections refused in the reserve.
@Suite(.timeLimit(.minutes(1))) struct AcceptPressureHandlerTests {
    /// Counts the reads that reach the channel (first in the pipeline: the last outbound handler before it).
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = Never
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    /// A budget of 256 descriptors with 10 held otherwise: a reserve of 32 and a headroom of 32, so accepts stop once
    /// 178 connections (and a read's batch of 4) would pass 192.
    let budget = DescriptorBudget(limit: 256, other: 10)

    @Test func theLevels() {
        #expect(budget.reserve == 32)
        #expect(budget.headroom == 32)
        #expect(DescriptorBudget(limit: 65536, other: 0).reserve == 1024)
        #expect(DescriptorBudget(limit: 65536, other: 0).headroom == 4096)
    }

    @Test func readsAreHeldAtTheAcceptLevelAndPassedOnWhenAConnectionCloses() throws {
        let server = EmbeddedChannel()
        let counter = ReadCounter()
        try server.pipeline.syncOperations.addHandler(counter)
        try server.pipeline.syncOperations.addHandler(AcceptPressureHandler(logger: Logger(label: "test"), budget: budget))
        var children: [EmbeddedChannel] = []
        for _ in 0..<178 {
            let child = EmbeddedChannel()
            children.append(child)
            try server.writeInbound(child as any Channel)
            let _: (any Channel)? = try server.readInbound()
        }
        #expect(budget.connections == 178)
        server.read()
        #expect(counter.reads == 1, "a read with 178 connections open")

        let oneMore = EmbeddedChannel()
        try server.writeInbound(oneMore as any Channel)
        server.read()
        server.embeddedEventLoop.run()
        #expect(counter.reads == 1, "a read passed on with 179 connections open")

        _ = try oneMore.finish()
        oneMore.embeddedEventLoop.run()
        server.embeddedEventLoop.run()
        #expect(budget.connections == 178)
        #expect(counter.reads == 2, "the held read not passed on once a connection closed")
        for child in children { _ = try child.finish() }
        #expect(budget.connections == 0)
    }

    @Test func outboundConnectionsStopAtTheReserve() throws {
        let loop = EmbeddedEventLoop()
        var made: [EmbeddedChannel] = []
        var refused = 0
        for _ in 0..<240 {
            let connected = budget.connect(on: loop) {
                let channel = EmbeddedChannel(loop: loop)
                made.append(channel)
                return loop.makeSucceededFuture(channel as any Channel)
            }
            connected.whenFailure { error in
                if error is DescriptorBudget.Exhausted { refused += 1 }
            }
        }
        loop.run()
        #expect(made.count == 214, "256 − 32 in reserve − 10 held otherwise")
        #expect(refused == 26)
        #expect(budget.connections == 214)
        for channel in made { _ = try channel.finish() }
        loop.run()
        #expect(budget.connections == 0)
    }
}

extension AcceptPressureHandlerTests {
    /// Should `accept` fail all the same (`EMFILE`: descriptors the budget does not count), the next connection — the
    /// one the spare descriptor made room for — is closed at once and counted as refused.
    @Test func anAcceptFailingForWantOfDescriptorsClosesTheNextConnection() throws {
        let server = EmbeddedChannel()
        let refused = Counted()
        try server.pipeline.syncOperations.addHandler(AcceptPressureHandler(logger: Logger(label: "test"), budget: budget, refused: { refused.add() }))
        server.pipeline.fireErrorCaught(IOError(errnoCode: EMFILE, reason: "accept"))
        #expect(throws: IOError.self) { try server.throwIfErrorCaught() }
        let shed = EmbeddedChannel()
        let closed = Counted()
        shed.closeFuture.whenComplete { _ in closed.add() }
        try server.writeInbound(shed as any Channel)
        shed.embeddedEventLoop.run()
        server.embeddedEventLoop.run()
        #expect(refused.value == 1)
        #expect(closed.value == 1, "the connection the spare made room for was kept")
        let kept: (any Channel)? = try server.readInbound()
        #expect(kept == nil, "the connection the spare made room for was passed on")
        let next = EmbeddedChannel()
        try server.writeInbound(next as any Channel)
        let passed: (any Channel)? = try server.readInbound()
        #expect(passed != nil, "the spare taken back, the next connection passes")
        _ = try next.finish()
    }

    final class Counted: Sendable {
        private let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        func add() { count.add(1, ordering: .relaxed) }
    }
}
