import ArgumentParser
import NIOCore
import NIOPosix

/// `--event-loops`, shared by `serve` and `gateway`: how many event loops (threads) serve connections. Each loop
/// sleeps in `epoll_wait` when it has nothing to do and is woken for the next bytes; on a machine shared with other
/// work, or under light load, fewer loops each find more to do per wake-up (one loop handling 8 busy keep-alive
/// connections switches context ~50 times less a request than two sharing them: `Benchmarks/HISTORY.md`).
struct EventLoopOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The event loops (threads) that serve connections. Default: one per core.",
        valueName: "count"))
    var eventLoops: Int?

    func validate() throws {
        if let eventLoops, !(1...256).contains(eventLoops) { throw ValidationError("--event-loops must be from 1 to 256") }
    }

    /// Sizes NIO's shared event loop group, which the server, the gateway and their clients use. Called first in a
    /// command's `run()`, before anything uses the group (it is sized once, when first used).
    func apply() {
        if let eventLoops { NIOSingletons.groupLoopCountSuggestion = eventLoops }
    }
}
