package import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's file descriptors, kept from running out: connections never take the last ones.
///
/// A process that uses its last descriptor does not only refuse connections. Other code needs one at moments it does
/// not choose, and some of it cannot fail gracefully: on Linux, libdispatch (which runs Swift concurrency's global
/// executor) opens `/proc/<tid>/stat` once a second while work is queued, and aborts the process (`SIGILL`,
/// "workq: registered worker exited prematurely") when that `open` fails — issue 54's descriptor drill killed the
/// gateway that way about one run in eight. The logs, the store, DNS and Kerberos need descriptors too.
///
/// So connections are counted — every accepted one (``AcceptPressureHandler``) and every outbound one
/// (``connect(_:)``) from the moment it exists until its channel has closed — on top of the descriptors the process
/// holds otherwise (counted from `/proc/self/fd` when a listener starts and whenever one pauses). Three levels:
/// - listeners stop accepting (they stop asking to read, so clients wait in the kernel's backlog, as nginx does at
///   `worker_connections`) while fewer than ``reserve`` + ``headroom`` descriptors are free, and resume when the
///   count has fallen under that level again;
/// - outbound connections (upstreams) fail at once, with ``Exhausted``, while fewer than ``reserve`` are free: the
///   headroom is theirs, since an accepted client usually needs one;
/// - the ``reserve`` is never given to a connection.
///
/// One budget for the process (``shared``): descriptors are the process's, whichever listener or pool takes them.
package final class DescriptorBudget: Sendable {
    /// The process's budget.
    package static let shared = DescriptorBudget()

    /// Descriptors no connection takes.
    package var reserve: Int { levels.withLock { $0.reserve } }
    /// Descriptors above the reserve that accepts leave to outbound connections.
    package var headroom: Int { levels.withLock { $0.headroom } }

    private let counted = Atomic<Int>(0)
    private let levels: Mutex<Levels>
    /// Listeners waiting for room: each one's wake-up, run when a connection closes under the accept level.
    private let waiting = Mutex<[ObjectIdentifier: @Sendable () -> Void]>([:])
    private let waitingCount = Atomic<Int>(0)
    private let lastRecount = Mutex<NIODeadline>(.distantPast)
    /// Whether ``recount()`` reads the process's limit and descriptors (not for a budget given its numbers).
    private let countsProcess: Bool

    private struct Levels {
        var limit: Int
        var reserve: Int
        var headroom: Int
        /// Descriptors the process holds that are not counted connections (files, event loops' own, the listeners).
        var other: Int

        init(limit: Int, other: Int) {
            self.limit = limit
            self.reserve = min(max(limit / 8, 32), 1024)
            self.headroom = min(max(limit / 8, 32), 4096)
            self.other = other
        }
    }

    /// A budget for a process limited to `limit` descriptors (the soft `RLIMIT_NOFILE` by default) holding `other`
    /// descriptors besides the connections it counts (counted from `/proc/self/fd` by default).
    package init(limit: Int? = nil, other: Int? = nil) {
        levels = Mutex(Levels(limit: limit ?? Self.softLimit(), other: other ?? 0))
        countsProcess = limit == nil && other == nil
        recount()
    }

    /// An outbound connection could not be made: the process is down to its reserve of descriptors.
    package struct Exhausted: Error, CustomStringConvertible {
        package var description: String { "out of file descriptors: the gateway keeps its last ones in reserve" }
    }

    // MARK: Counting

    /// Connections counted now.
    package var connections: Int { counted.load(ordering: .relaxed) }

    /// Counts `channel`'s descriptor until it closes.
    package func count(_ channel: any Channel) {
        counted.add(1, ordering: .relaxed)
        channel.closeFuture.whenComplete { _ in self.release() }
    }

    /// Whether listeners may accept: more than the reserve and the headroom free, with room for one read's accepts
    /// (`batch`).
    package func admitsAccepts(batch: Int = 4) -> Bool {
        let connections = counted.load(ordering: .relaxed)
        return levels.withLock { connections + $0.other + batch <= $0.limit - $0.reserve - $0.headroom }
    }

    /// Makes an outbound connection with `connect` if a descriptor above the reserve is free, counting it until it
    /// closes; otherwise fails with ``Exhausted`` without trying.
    package func connect(on eventLoop: any EventLoop, _ connect: () -> EventLoopFuture<any Channel>) -> EventLoopFuture<any Channel> {
        let connections = counted.add(1, ordering: .relaxed).newValue
        guard levels.withLock({ connections + $0.other <= $0.limit - $0.reserve }) else {
            release()
            return eventLoop.makeFailedFuture(Exhausted())
        }
        let connected = connect()
        connected.whenComplete { result in
            switch result {
            case .success(let channel): channel.closeFuture.whenComplete { _ in self.release() }
            case .failure: self.release()
            }
        }
        return connected
    }

    private func release() {
        counted.subtract(1, ordering: .relaxed)
        guard waitingCount.load(ordering: .relaxed) > 0, admitsAccepts() else { return }
        let wakeUps = waiting.withLock { waiting in
            defer {
                waitingCount.subtract(waiting.count, ordering: .relaxed)
                waiting.removeAll()
            }
            return Array(waiting.values)
        }
        for wakeUp in wakeUps { wakeUp() }
    }

    // MARK: Waiting

    /// Runs `wakeUp` once the accept level is met again (at once if it is already).
    package func waitForRoom(_ listener: ObjectIdentifier, _ wakeUp: @escaping @Sendable () -> Void) {
        waiting.withLock { waiting in
            if waiting.updateValue(wakeUp, forKey: listener) == nil { waitingCount.add(1, ordering: .relaxed) }
        }
        if admitsAccepts() {
            let wakeUp = waiting.withLock { waiting in
                let wakeUp = waiting.removeValue(forKey: listener)
                if wakeUp != nil { waitingCount.subtract(1, ordering: .relaxed) }
                return wakeUp
            }
            wakeUp?()
        }
    }

    /// ``recount()`` unless it ran less than `interval` ago (it lists `/proc/self/fd`: milliseconds at 20,000).
    package func recount(ifOlderThan interval: TimeAmount) {
        let now = NIODeadline.now()
        let due = lastRecount.withLock { last in
            guard now - last >= interval else { return false }
            last = now
            return true
        }
        if due { recount() }
    }

    /// Counts again the descriptors the process holds besides connections (`/proc/self/fd`, where it exists), and reads
    /// the limit again (raised since, by ``OpenFileLimit``).
    package func recount() {
        guard countsProcess else { return }
        lastRecount.withLock { $0 = .now() }
        let limit = Self.softLimit()
        #if os(Linux)
        var open = 0
        if let directory = opendir("/proc/self/fd") {
            while readdir(directory) != nil { open += 1 }
            closedir(directory)
            open -= 3 // ".", "..", and the directory's own descriptor
        }
        #else
        let open = 64
        #endif
        let connections = counted.load(ordering: .relaxed)
        levels.withLock { levels in
            let other = max(open - connections, 0)
            if levels.limit != limit { levels = Levels(limit: limit, other: other) } else { levels.other = other }
        }
    }

    static func softLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return Int(clamping: min(limit.rlim_cur, rlim_t(Int.max / 2)))
    }
}
