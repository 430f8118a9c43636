import GatehouseProtocol

/// The app's hooks a flow calls while it holds the authorization manager's turn — `handleSuccess`, `handleFailure`,
/// `challengeAbandoned` — kept until the turn has ended, then run in the order they were called, before the flow's
/// callers get its outcome. A hook may thus ask for a token, log in or send a request itself: it takes a turn of its
/// own, where run inside the turn it was called in it would wait for that turn forever.
final class DeferredHooks: Sendable {
    /// The flow's hooks, while the current task is in a turn.
    @TaskLocal static var current: DeferredHooks?

    private let hooks = Locked<[@Sendable () async -> Void]>([])

    /// Runs `hook` after the current turn when there is one, now otherwise.
    static func call(_ hook: @escaping @Sendable () async -> Void) async {
        if let current {
            current.hooks.withLock { $0.append(hook) }
        } else {
            await hook()
        }
    }

    /// Runs the hooks kept, first to last (hooks that hooks call are run too).
    func run() async {
        while let next = hooks.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            await next()
        }
    }
}
