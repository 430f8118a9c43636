import Foundation
import GatehouseProtocol
import GatehouseStore
import Logging
import Metrics
public import ServiceLifecycle
import Synchronization

/// Writes the audit log to the store: registrations, check outcomes, tokens issued and revoked, lockouts and
/// admin actions, each with time, client, application, user, source address and node — never a secret, a token
/// or a code. A failed write never fails the request: while the store is out (``StoreUnavailable``) the events
/// wait, at most ``bound`` of them (the oldest go first beyond it), and are written again with a growing pause;
/// what is dropped — beyond the bound, or refused by the store for another reason — is counted in
/// `gatehouse_audit_events_dropped_total` and logged with its count. Events older than the retention are
/// deleted by the node that writes, at most once an hour. Optionally each event is also written as one JSON line
/// through swift-log, for a log pipeline.
///
/// Events are stored in groups, by a writer of their own: the first event queued while no writer is at work or
/// waiting starts one after ``linger`` (10 ms), and that writer stores everything queued by then, and whatever is
/// queued while it writes, in one store call per batch. A request never waits for its events: under load, one
/// store call carries the events of many requests (measured: 1.7 audit writes per complete flow before, a few
/// hundredths after). An event is in the store within about ``linger`` of its request's answer; ``flushed()``
/// writes what is queued at once and waits for it (the admin API reads the log after it), and so does the server's
/// graceful shutdown (``AuditLog`` is a service of the application, stopped after the HTTP server).
public final class AuditLog: Service, Sendable {
    let store: any AuditStore & StoreOutages
    /// This node's name, in every event it records.
    public let node: String
    /// How long events are kept, ms.
    let retention: Int64
    private let logger: Logger
    /// Where events go as JSON lines too, if anywhere.
    private let lines: Logger?
    private let lastPrune = Mutex<Int64>(0)
    static let pruneSpacing: Int64 = 3_600_000
    /// How long the first of a group of events waits for others before it is written.
    let linger: Duration
    /// The most events kept while the store is out.
    let bound: Int
    /// Events dropped (``bound`` exceeded, or refused by the store).
    private let dropped: Metrics.Counter?

    /// Events waiting for the writer, whether a writer is at work or on its way, and who waits for it to be done.
    private struct Queue: ~Copyable {
        var events: [AuditEvent] = []
        /// A writer is storing events; it goes on until none are left.
        var writing = false
        /// A writer will start after ``linger``.
        var lingering = false
        var flushWaiters: [CheckedContinuation<Void, Never>] = []
    }
    private let queue = Mutex(Queue())

    init(store: any AuditStore & StoreOutages, node: String, retentionDays: Int, logger: Logger, lines: Logger? = nil,
         linger: Duration = .milliseconds(10), bound: Int = 100_000, dropped: Metrics.Counter? = nil) {
        self.store = store
        self.linger = linger
        self.bound = bound
        self.dropped = dropped
        self.lines = lines
        self.node = node
        self.retention = Int64(max(retentionDays, 1)) * 86_400_000
        self.logger = logger
    }

    /// Records `events` (in order), stamped with this node; they are stored within about ``linger``.
    func record(_ events: [AuditEvent]) {
        guard !events.isEmpty else { return }
        let stamped = events.map { event in
            var event = event
            event.node = node
            return event
        }
        if let lines {
            for event in stamped {
                guard case .object(var fields) = AdminService.json(event) else { continue }
                fields["id"] = nil   // assigned by the store
                lines.info("\(String(decoding: JSONBody.buffer(JSON.object(fields)).readableBytesView, as: UTF8.self))")
            }
        }
        let startsLingering = queue.withLock { queue in
            queue.events += stamped
            guard !queue.writing, !queue.lingering else { return false }
            queue.lingering = true
            return true
        }
        if startsLingering {
            Task {
                try? await Task.sleep(for: linger)
                let writes = queue.withLock { queue in
                    queue.lingering = false
                    // A flush may have started the writer meanwhile: it takes these events too.
                    guard !queue.writing else { return false }
                    queue.writing = true
                    return true
                }
                if writes { await drain() }
            }
        }
    }

    /// Stores queued events batch by batch until none are left, then answers whoever waits for a flush. While the
    /// store is out, a batch goes back to the front of the queue (bounded) and is tried again after a pause; whoever
    /// waits for a flush is answered then (the events are not in the store yet, and are not lost).
    private func drain() async {
        var pause = Duration.milliseconds(100)
        while true {
            let (batch, waiters) = queue.withLock { queue -> ([AuditEvent], [CheckedContinuation<Void, Never>]) in
                if queue.events.isEmpty {
                    queue.writing = false
                    defer { queue.flushWaiters = [] }
                    return ([], queue.flushWaiters)
                }
                defer { queue.events = [] }
                return (queue.events, [])
            }
            if batch.isEmpty {
                for waiter in waiters { waiter.resume() }
                return
            }
            guard await store(batch) else {
                let (overflow, waiters) = queue.withLock { queue -> (Int, [CheckedContinuation<Void, Never>]) in
                    queue.events = batch + queue.events
                    let overflow = max(0, queue.events.count - bound)
                    if overflow > 0 { queue.events.removeFirst(overflow) }
                    defer { queue.flushWaiters = [] }
                    return (overflow, queue.flushWaiters)
                }
                for waiter in waiters { waiter.resume() }
                if overflow > 0 { drop(overflow, because: "more than \(bound) waited for the store") }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
                continue
            }
            pause = .milliseconds(100)
        }
    }

    /// Counts and logs events that will never be stored.
    private func drop(_ count: Int, because reason: String) {
        dropped?.increment(by: Int64(count))
        logger.error("\(count) audit events dropped: \(reason)")
    }

    /// Stores `batch`: `false` when the store is out and it should be tried again (an event refused for another
    /// reason is dropped, counted and logged).
    private func store(_ batch: [AuditEvent]) async -> Bool {
        do {
            try await store.appendAudit(batch)
        } catch {
            if let outage = store.outage(error) {
                logger.debug("Audit events wait for the store: \(outage)")
                return false
            }
            drop(batch.count, because: "the store refused them (\(type(of: error))): \(batch.map(\.event))")
            return true
        }
        let now = EpochTime.nowMillis()
        let due = lastPrune.withLock { last in
            guard now - last >= Self.pruneSpacing else { return false }
            last = now
            return true
        }
        if due {
            do {
                _ = try await store.deleteAudit(before: now - retention)
            } catch {
                logger.warning("Old audit events could not be deleted (\(type(of: error))); trying again in an hour")
            }
        }
        return true
    }

    /// Returns when every event recorded before the call is in the store (or failed to be stored, and was logged):
    /// what is queued is written now, without waiting for ``linger``.
    func flushed() async {
        await withCheckedContinuation { continuation in
            let writes = queue.withLock { queue -> Bool? in
                guard queue.writing || !queue.events.isEmpty else { return nil }
                queue.flushWaiters.append(continuation)
                guard !queue.writing else { return false }
                queue.writing = true
                return true
            }
            switch writes {
            case nil: continuation.resume()
            case true?: Task { await self.drain() }
            case false?: break
            }
        }
    }

    /// How long a graceful shutdown keeps trying a store that is out (a database restarting) before the queued events
    /// are given up (counted and logged as dropped).
    static let shutdownPatience = Duration.seconds(10)

    /// Waits for the application's graceful shutdown, then stores what is queued — trying again while the store is
    /// out, for ``shutdownPatience``: one failed write must not take the queue's events away with the process.
    public func run() async throws {
        try? await gracefulShutdown()
        let deadline = ContinuousClock.now + Self.shutdownPatience
        await flushed()
        while queue.withLock({ !$0.events.isEmpty }), ContinuousClock.now < deadline {
            await flushed()   // answered after the writer's next attempt
        }
        let left = queue.withLock { $0.events.count }
        if left > 0 { drop(left, because: "the store was still out at shutdown") }
    }

    /// Records one event.
    func record(_ event: String, clientID: String? = nil, application: String? = nil, user: String? = nil, check: String? = nil,
                address: String? = nil, actor: String? = nil, detail: String? = nil) {
        record([AuditEvent(time: EpochTime.nowMillis(), event: event, clientID: clientID, application: application, user: user,
                                 check: check, address: address, actor: actor, detail: detail)])
    }
}
