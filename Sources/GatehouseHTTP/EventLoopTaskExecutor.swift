import GatehouseProtocol
package import NIOCore

/// A Swift concurrency task executor that runs its jobs on one NIO event loop.
///
/// A request's task (`serve` runs one per request) preferring its channel's event loop routes and answers on the
/// thread that owns the socket: no hop to Swift concurrency's threads and back for every request and store call, which is most of what a request on a new connection cost at everyday load (the `perf` profile of issue 39:
/// 64 context switches per `/health` on a new connection). Work that must not hold an event loop does not run here:
/// bcrypt has threads of its own (`PasswordVerifier.hashingThreads`), SQLite its blocking pool, PostgreSQL its own
/// event loops; everything else a request does is short.
package final class EventLoopTaskExecutor: TaskExecutor {
    package let eventLoop: any EventLoop

    package init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        eventLoop.execute { job.runSynchronously(on: executor) }
    }

    /// Runs `body` on the event loop after `delay` (NIO's own timer: no other thread woken), unless the returned
    /// cancel is called first.
    package func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let scheduled = eventLoop.scheduleTask(in: .nanoseconds(delay.wholeNanoseconds)) { body() }
        return { scheduled.cancel() }
    }
}
