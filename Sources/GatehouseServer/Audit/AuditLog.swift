import Foundation
import GatehouseProtocol
import GatehouseStore
import Logging
import ServiceLifecycle
import Synchronization

/// Writes the audit log to the store: registrations, check outcomes, tokens issued and revoked, lockouts and
/// admin actions, each with time, client, application, user, source address and node — never a secret, a token
/// or a code. A failed write is logged and does not fail the request. Events older than the retention are
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
    /// How long the first of a group of events waits for others before it is written.
    let linger: Duration

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

    init(store: any GatehouseStore, node: String, retentionDays: Int, logger: Logger, lines: Logger? = nil,
         linger: Duration = .milliseconds(10)) {
        self.store = store
        self.linger = linger
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

    /// Stores queued events batch by batch until none are left, then answers whoever waits for a flush.
    private func drain() async {
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
            await store(batch)
        }
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

    /// Waits for the application's graceful shutdown, then stores what is queued.
    public func run() async throws {
        try? await gracefulShutdown()
        await flushed()
    }

    /// Records one event.
    func record(_ event: String, clientID: String? = nil, application: String? = nil, user: String? = nil, check: String? = nil,
                address: String? = nil, actor: String? = nil, detail: String? = nil) {
        record([AuditEvent(time: EpochTime.nowMillis(), event: event, clientID: clientID, application: application, user: user,
                                 check: check, address: address, actor: actor, detail: detail)])
    }
}
