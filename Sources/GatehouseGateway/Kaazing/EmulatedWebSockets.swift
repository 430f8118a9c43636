import NIOConcurrencyHelpers
import NIOCore

/// The gateway's emulated WebSockets by id (the capability their upstream and downstream URLs carry), each on its
/// event loop. Bounded: a create beyond ``limit`` is refused, and so is one from a client (its address as the gateway
/// derives it, ``TrustedProxies``) that holds ``halfOpenPerClient`` sessions no downstream has attached to yet — before,
/// the bound was only global, and one client could hold all of it (issue 54, finding 6).
final class EmulatedWebSockets: Sendable {
    /// A session and the event loop it must be used on.
    struct Entry: Sendable {
        let eventLoop: any EventLoop
        let session: NIOLoopBound<EmulatedWebSocket>
        /// The origin the create came from (``EmulatedWebSocket/origin``).
        let origin: String?
        /// The binary encoding (``EmulatedWebSocket/binary``).
        let binary: Bool

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

    /// Why ``add(_:client:)`` refused a session.
    enum Refusal: Error {
        /// The gateway holds ``limit`` sessions.
        case full
        /// The client holds ``halfOpenPerClient`` sessions without a downstream.
        case clientHoldsHalfOpen
    }

    private struct Registry {
        var sessions: [String: Entry] = [:]
        /// The client of each session no downstream has attached to yet, and how many such sessions each client holds.
        var halfOpen: [String: String] = [:]
        var halfOpenByClient: [String: Int] = [:]

        mutating func settle(_ id: String) {
            guard let client = halfOpen.removeValue(forKey: id) else { return }
            let left = (halfOpenByClient[client] ?? 1) - 1
            halfOpenByClient[client] = left > 0 ? left : nil
        }
    }

    private let registry = NIOLockedValueBox(Registry())
    let limit: Int
    let halfOpenPerClient: Int

    init(limit: Int = 10_000, halfOpenPerClient: Int = 16) {
        self.limit = limit
        self.halfOpenPerClient = halfOpenPerClient
    }

    /// A fresh id: 128 random bits, as hex.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Registers `session` (on its event loop) of `client`, half-open until ``downstreamAsked(_:)``; refused when the
    /// gateway holds ``limit`` sessions or `client` ``halfOpenPerClient`` half-open ones.
    func add(_ session: EmulatedWebSocket, client: String) -> Refusal? {
        let entry = Entry(eventLoop: session.eventLoop, session: NIOLoopBound(session, eventLoop: session.eventLoop), origin: session.origin,
                          binary: session.binary)
        let limit = self.limit, halfOpenPerClient = self.halfOpenPerClient
        return registry.withLockedValue { registry in
            guard registry.sessions.count < limit else { return .full }
            guard registry.halfOpenByClient[client, default: 0] < halfOpenPerClient else { return .clientHoldsHalfOpen }
            registry.sessions[session.id] = entry
            registry.halfOpen[session.id] = client
            registry.halfOpenByClient[client, default: 0] += 1
            return nil
        }
    }

    /// Session `id`'s client asked its downstream: it no longer counts against its client's half-open sessions.
    func downstreamAsked(_ id: String) {
        registry.withLockedValue { $0.settle(id) }
    }

    func session(_ id: String) -> Entry? {
        registry.withLockedValue { $0.sessions[id] }
    }

    func remove(_ id: String) {
        registry.withLockedValue { registry in
            registry.settle(id)
            registry.sessions.removeValue(forKey: id)
        }
    }

    var count: Int { registry.withLockedValue { $0.sessions.count } }

    /// The sessions no downstream has attached to yet.
    var halfOpenCount: Int { registry.withLockedValue { $0.halfOpen.count } }
}
