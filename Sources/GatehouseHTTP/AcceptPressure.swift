package import Logging
import NIOConcurrencyHelpers
package import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps a listening socket within the process's descriptors, and quiet when they run out anyway.
///
/// First, the ``DescriptorBudget``: every accepted connection is counted until it closes, and while the budget's
/// accept level is reached the listener stops asking to read — no `accept` at all, clients wait in the kernel's
/// backlog — until a connection closes under it (or, checked every second, the process's other descriptors fall).
///
/// Then, should `accept` fail all the same (`EMFILE`, `ENFILE`: descriptors taken by what the budget does not count):
/// SwiftNIO 2's server channel keeps its read pending when `accept` fails, the socket stays registered for reading,
/// the kernel reports the waiting connection again at once, and the event loop calls `accept` in a loop — measured at
/// 100 % of a core, `accept4` failing thousands of times a second — while `AcceptBackoffHandler`'s one-second pause
/// never applies (it delays the *next* read, and none is asked). So this handler, first in the server channel's
/// pipeline, keeps a spare descriptor: when an accept fails for want of descriptors it lets the spare go, so the next
/// accept succeeds; that connection, which nothing could serve, is closed at once, the pending read is over, NIO's
/// backoff holds the next accept for a second, and the spare is taken back. What is refused or held back is counted
/// and warned about (one line every 10 s).
package final class AcceptPressureHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = any Channel
    package typealias InboundOut = any Channel
    package typealias OutboundIn = Never

    private let logger: Logger
    private let refused: @Sendable () -> Void
    private let paused: @Sendable () -> Void
    private let budget: DescriptorBudget
    private var spare: Int32 = -1
    /// The next accepted connection is the one the spare made room for: closed at once.
    private var shedding = false
    /// A read asked while the budget had no room: passed on once it has.
    private var readHeld = false
    private var recheck: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    private var refusedSinceWarning = 0
    private var lastWarning: NIODeadline?

    /// `refused` is called for every connection refused for want of descriptors, `paused` each time the listener
    /// stops accepting at the budget's level (metrics).
    package init(logger: Logger, budget: DescriptorBudget = .shared, refused: @escaping @Sendable () -> Void = {},
                 paused: @escaping @Sendable () -> Void = {}) {
        self.logger = logger
        self.budget = budget
        self.refused = refused
        self.paused = paused
    }

    /// Puts a handler first in `serverChannel`'s pipeline (before NIO's `AcceptBackoffHandler`, which swallows the
    /// errors it sees).
    package static func install(on serverChannel: any Channel, logger: Logger, budget: DescriptorBudget = .shared,
                                refused: @escaping @Sendable () -> Void = {}, paused: @escaping @Sendable () -> Void = {}) async {
        budget.recount()
        try? await serverChannel.eventLoop.submit {
            let handler = AcceptPressureHandler(logger: logger, budget: budget, refused: refused, paused: paused)
            try serverChannel.pipeline.syncOperations.addHandler(handler, position: .first)
        }.get()
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        spare = Self.openSpare()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        if spare >= 0 { Self.closeDescriptor(spare) }
        spare = -1
        recheck?.cancel()
        recheck = nil
        self.context = nil
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? IOError, error.errnoCode == EMFILE || error.errnoCode == ENFILE {
            outOfDescriptors()
        }
        context.fireErrorCaught(error)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let child = unwrapInboundIn(data)
        budget.count(child)
        guard shedding else {
            context.fireChannelRead(data)
            return
        }
        // The connection the spare made room for (or one that took a descriptor freed meanwhile): closed, and the
        // spare taken back once its descriptor is free (its close runs on its own event loop).
        refused()
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        child.close().whenComplete { _ in loop.execute { bound.value.reclaimSpare() } }
    }

    package func read(context: ChannelHandlerContext) {
        guard !budget.admitsAccepts() else {
            context.read()
            return
        }
        budget.recount(ifOlderThan: .milliseconds(100))
        guard !budget.admitsAccepts() else {
            context.read()
            return
        }
        if !readHeld {
            paused()
            warn("Near the open-file limit: accepting no new connection until some close", held: budget.connections)
        }
        readHeld = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        budget.waitForRoom(ObjectIdentifier(self)) { loop.execute { bound.value.resumeReading() } }
        // Descriptors the budget does not count (files, ...) are not announced when they close: looked at again.
        if recheck == nil {
            recheck = loop.scheduleTask(in: .seconds(1)) {
                bound.value.recheck = nil
                bound.value.resumeReading()
            }
        }
    }

    /// Passes on the read held back, if the budget has room now.
    private func resumeReading() {
        guard readHeld, let context else { return }
        readHeld = false
        read(context: context)
    }

    /// Takes the spare back; until it is, every accepted connection is closed (each accept that succeeds ends NIO's
    /// pending read, so its backoff holds the next for a second).
    private func reclaimSpare() {
        if spare < 0 { spare = Self.openSpare() }
        if spare >= 0 { shedding = false }
    }

    private func outOfDescriptors() {
        warn("Out of file descriptors: refusing new connections", held: nil)
        shedding = true
        if spare >= 0 {
            Self.closeDescriptor(spare)
            spare = -1
        }
    }

    /// One warning every 10 s at most, with what was refused since the last one.
    private func warn(_ message: String, held: Int?) {
        refusedSinceWarning += 1
        let now = NIODeadline.now()
        guard lastWarning.map({ now - $0 >= .seconds(10) }) ?? true else { return }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        var metadata: Logger.Metadata = ["refused": .stringConvertible(refusedSinceWarning)]
        if let held { metadata["connections"] = .stringConvertible(held) }
        logger.warning("\(message) (open-file limit \(limit.rlim_cur); raise it, e.g. LimitNOFILE=65536)", metadata: metadata)
        lastWarning = now
        refusedSinceWarning = 0
    }

    private static func openSpare() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    private static func closeDescriptor(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #elseif canImport(Darwin)
        _ = Darwin.close(descriptor)
        #endif
    }
}

/// The process's open-file limit at start: raised to its hard limit (what `ulimit -n` allows without privileges),
/// and a warning when it is still low for a server.
package enum OpenFileLimit {
    /// Raises the soft limit to the hard one; the limit in force.
    @discardableResult
    package static func raise() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }

    /// Raises the limit and warns when it stays under `needed`.
    package static func check(needed: UInt64 = 4096, logger: Logger) {
        let limit = raise()
        if limit < needed {
            logger.warning("The open-file limit is \(limit): at most about \(limit) connections at once (set LimitNOFILE=65536 in the systemd unit, or ulimit -n)")
        }
    }
}
