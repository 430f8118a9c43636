import Foundation
import GatehouseProtocol
import GatehouseStore
import Logging
import Synchronization

/// Writes the audit log to the store: registrations, check outcomes, tokens issued and revoked, lockouts and
/// admin actions, each with time, client, application, user, source address and node — never a secret, a token
/// or a code. A failed write is logged and does not fail the request. Events older than the retention are
/// deleted by the node that writes, at most once an hour. Optionally each event is also written as one JSON line
/// through swift-log, for a log pipeline.
///
/// Events are stored by group commit: a request whose events find no write under way stores them (and whatever
/// other requests queue meanwhile) itself; a request whose events find a write under way leaves them to that
/// writer and goes on. Under load, many requests' events share one transaction instead of one each; an event is
/// in the store a moment after its request's answer at the latest. ``flushed()`` waits for what is queued (the
/// admin API reads the log after it).
public final class AuditLog: Sendable {
    let store: any GatehouseStore
    /// This node's name, in every event it records.
    public let node: String
    /// How long events are kept, ms.
    let retention: Int64
    private let logger: Logger
    /// Where events go as JSON lines too, if anywhere.
    private let lines: Logger?
    private let lastPrune = Mutex<Int64>(0)
    static let pruneSpacing: Int64 = 3_600_000

    /// Events waiting for the writer, whether a writer is at work, and who waits for it to be done.
    private struct Queue: ~Copyable {
        var events: [AuditEvent] = []
        var writing = false
        var flushWaiters: [CheckedContinuation<Void, Never>] = []
    }
    private let queue = Mutex(Queue())
    /// Batches one writer stores before it hands the rest to a task of its own (its request has waited enough).
    static let batchesPerWriter = 4

    init(store: any GatehouseStore, node: String, retentionDays: Int, logger: Logger, lines: Logger? = nil) {
        self.store = store
        self.lines = lines
        self.node = node
        self.retention = Int64(max(retentionDays, 1)) * 86_400_000
        self.logger = logger
    }

    /// Records `events` (in order), stamped with this node.
    func record(_ events: [AuditEvent]) async {
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
        let writer = queue.withLock { queue in
            queue.events += stamped
            guard !queue.writing else { return false }
            queue.writing = true
            return true
        }
        if writer { await drain() }
    }

    /// Stores queued events batch by batch until none are left; hands on to a task after ``batchesPerWriter``.
    private func drain() async {
        for _ in 0..<Self.batchesPerWriter {
            let batch = queue.withLock { queue in
                defer { queue.events = [] }
                return queue.events
            }
            if batch.isEmpty { break }
            await store(batch)
        }
        let (more, waiters) = queue.withLock { queue -> (Bool, [CheckedContinuation<Void, Never>]) in
            if !queue.events.isEmpty { return (true, []) }
            queue.writing = false
            defer { queue.flushWaiters = [] }
            return (false, queue.flushWaiters)
        }
        for waiter in waiters { waiter.resume() }
        if more { Task { await self.drain() } }
    }

    private func store(_ batch: [AuditEvent]) async {
        do {
            try await store.appendAudit(batch)
            let now = EpochTime.nowMillis()
            let due = lastPrune.withLock { last in
                guard now - last >= Self.pruneSpacing else { return false }
                last = now
                return true
            }
            if due { try await store.deleteAudit(before: now - retention) }
        } catch {
            logger.error("Audit events could not be stored (\(type(of: error))): \(batch.map(\.event))")
        }
    }

    /// Returns when every event recorded before the call is in the store (or failed to be stored, and was logged).
    func flushed() async {
        await withCheckedContinuation { continuation in
            let done = queue.withLock { queue in
                guard queue.writing else { return true }
                queue.flushWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Records one event.
    func record(_ event: String, clientID: String? = nil, application: String? = nil, user: String? = nil, check: String? = nil,
                address: String? = nil, actor: String? = nil, detail: String? = nil) async {
        await record([AuditEvent(time: EpochTime.nowMillis(), event: event, clientID: clientID, application: application, user: user,
                                 check: check, address: address, actor: actor, detail: detail)])
    }
}
