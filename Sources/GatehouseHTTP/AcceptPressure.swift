package import Logging
import NIOConcurrencyHelpers
package import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps a listening socket quiet when the process runs out of file descriptors.
///
/// SwiftNIO 2's server channel keeps its read pending when `accept` fails (`EMFILE`, `ENFILE`): the socket stays
/// registered for reading, the kernel reports the waiting connection again at once, and the event loop calls
/// `accept` in a loop — measured at 100 % of a core, `accept4` failing thousands of times a second — while
/// `AcceptBackoffHandler`'s one-second pause never applies (it delays the *next* read, and none is asked). So this
/// handler, first in the server channel's pipeline, keeps a spare descriptor: when an accept fails for want of
/// descriptors it lets the spare go, so the next accept succeeds; that connection, which nothing could serve, is
/// closed at once, the pending read is over, NIO's backoff holds the next accept for a second, and the spare is
/// taken back. What is refused is counted and warned about (one line every 10 s).
package final class AcceptPressureHandler: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = any Channel
    package typealias InboundOut = any Channel

    private let logger: Logger
    private let refused: @Sendable () -> Void
    private var spare: Int32 = -1
    /// The next accepted connection is the one the spare made room for: closed at once.
    private var shedding = false
    private var refusedSinceWarning = 0
    private var lastWarning: NIODeadline?

    /// `refused` is called for every connection refused for want of descriptors (a metric).
    package init(logger: Logger, refused: @escaping @Sendable () -> Void = {}) {
        self.logger = logger
        self.refused = refused
    }

    /// Puts a handler first in `serverChannel`'s pipeline (before NIO's `AcceptBackoffHandler`, which swallows the
    /// errors it sees).
    package static func install(on serverChannel: any Channel, logger: Logger, refused: @escaping @Sendable () -> Void = {}) async {
        try? await serverChannel.eventLoop.submit {
            try serverChannel.pipeline.syncOperations.addHandler(AcceptPressureHandler(logger: logger, refused: refused), position: .first)
        }.get()
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        spare = Self.openSpare()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        if spare >= 0 { close(spare) }
        spare = -1
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? IOError, error.errnoCode == EMFILE || error.errnoCode == ENFILE {
            outOfDescriptors()
        }
        context.fireErrorCaught(error)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard shedding else {
            context.fireChannelRead(data)
            return
        }
        // The connection the spare made room for (or one that took a descriptor freed meanwhile): closed, and the
        // spare taken back once its descriptor is free (its close runs on its own event loop).
        refused()
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        unwrapInboundIn(data).close().whenComplete { _ in loop.execute { bound.value.reclaimSpare() } }
    }

    /// Takes the spare back; until it is, every accepted connection is closed (each accept that succeeds ends NIO's
    /// pending read, so its backoff holds the next for a second).
    private func reclaimSpare() {
        if spare < 0 { spare = Self.openSpare() }
        if spare >= 0 { shedding = false }
    }

    private func outOfDescriptors() {
        refusedSinceWarning += 1
        let now = NIODeadline.now()
        if lastWarning.map({ now - $0 >= .seconds(10) }) ?? true {
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            logger.warning("Out of file descriptors: refusing new connections (open-file limit \(limit.rlim_cur); raise it, e.g. LimitNOFILE=65536)",
                           metadata: ["refused": .stringConvertible(refusedSinceWarning)])
            lastWarning = now
            refusedSinceWarning = 0
        }
        shedding = true
        if spare >= 0 {
            close(spare)
            spare = -1
        }
    }

    private static func openSpare() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
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
