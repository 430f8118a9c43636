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
        do {
            try await store.appendAudit(stamped)
            let now = EpochTime.nowMillis()
            let due = lastPrune.withLock { last in
                guard now - last >= Self.pruneSpacing else { return false }
                last = now
                return true
            }
            if due { try await store.deleteAudit(before: now - retention) }
        } catch {
            logger.error("Audit events could not be stored (\(type(of: error))): \(stamped.map(\.event))")
        }
    }

    /// Records one event.
    func record(_ event: String, clientID: String? = nil, application: String? = nil, user: String? = nil, check: String? = nil,
                address: String? = nil, actor: String? = nil, detail: String? = nil) async {
        await record([AuditEvent(time: EpochTime.nowMillis(), event: event, clientID: clientID, application: application, user: user,
                                 check: check, address: address, actor: actor, detail: detail)])
    }
}
