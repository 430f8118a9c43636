import GatehouseProtocol

/// The one answer a challenge handler owes the framework: ``wait(cancelled:ask:)`` suspends until ``resume(_:)``
/// delivers it, exactly once. A newer wait, or the waiting task's cancellation, ends the open one with
/// `cancelled`. Shared by ``SecurityCheckChallengeHandler`` and ``LoginPageChallengeHandler``.
final class PendingAnswer<Value: Sendable>: Sendable {
    private let pending = Locked<CheckedContinuation<Value, Never>?>(nil)

    /// Whether a wait is open.
    var isOpen: Bool { pending.withLock { $0 != nil } }

    /// Opens a wait, calls `ask` (which leads, now or later, to ``resume(_:)``), and returns the answer; returns
    /// `cancelled` at once when the task is already cancelled.
    func wait(cancelled: Value, ask: () -> Void) async -> Value {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
                let abandoned = pending.withLock { open -> CheckedContinuation<Value, Never>? in
                    if Task.isCancelled { return continuation }
                    let previous = open
                    open = continuation
                    previous?.resume(returning: cancelled)
                    return nil
                }
                if let abandoned {
                    abandoned.resume(returning: cancelled)
                } else {
                    ask()
                }
            }
        } onCancel: {
            resume(cancelled)
        }
    }

    /// Delivers the answer of the open wait; `false` (and nothing done) when none is open.
    @discardableResult
    func resume(_ value: Value) -> Bool {
        let continuation = pending.withLock { open in
            defer { open = nil }
            return open
        }
        continuation?.resume(returning: value)
        return continuation != nil
    }
}
