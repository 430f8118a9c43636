import NIOConcurrencyHelpers
import NIOCore

/// The gateway's emulated WebSockets by id (the capability their upstream and downstream URLs carry), each on its
/// event loop. Bounded: a create beyond ``limit`` is refused.
final class EmulatedWebSockets: Sendable {
    /// A session and the event loop it must be used on.
    struct Entry: Sendable {
        let eventLoop: any EventLoop
        let session: NIOLoopBound<EmulatedWebSocket>
        /// The origin the create came from (``EmulatedWebSocket/origin``).
        let origin: String?

        /// Whether a request naming `origin` (``EmulationRequest/origin(_:)``) may use the session: the create's
        /// origin, normalised (``ProtectedService/origin(_:)``), and no origin when the create had none. Before, an
        /// upstream or downstream request of another origin was answered (issue 54, finding 9).
        func admits(origin other: String?) -> Bool {
            switch (origin, other) {
            case (nil, nil): return true
            case (let mine?, let theirs?): return (ProtectedService.origin(mine) ?? mine) == (ProtectedService.origin(theirs) ?? theirs)
            default: return false
            }
        }

        /// Runs `body` with the session on its event loop.
        func execute(_ body: @escaping @Sendable (EmulatedWebSocket) -> Void) {
            let session = self.session
            eventLoop.execute { body(session.value) }
        }
    }

    private let sessions = NIOLockedValueBox<[String: Entry]>([:])
    let limit: Int

    init(limit: Int = 10_000) {
        self.limit = limit
    }

    /// A fresh id: 128 random bits, as hex.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Registers `session` (on its event loop); `false` when the gateway holds ``limit`` already.
    func add(_ session: EmulatedWebSocket) -> Bool {
        let entry = Entry(eventLoop: session.eventLoop, session: NIOLoopBound(session, eventLoop: session.eventLoop), origin: session.origin)
        return sessions.withLockedValue { sessions in
            guard sessions.count < limit else { return false }
            sessions[session.id] = entry
            return true
        }
    }

    func session(_ id: String) -> Entry? {
        sessions.withLockedValue { $0[id] }
    }

    func remove(_ id: String) {
        _ = sessions.withLockedValue { $0.removeValue(forKey: id) }
    }

    var count: Int { sessions.withLockedValue { $0.count } }
}
