import Foundation

/// Where MobileFirst calls an app back: the main thread, later (never from inside the call that asked). Every
/// completion handler and challenge-handler hook of this module goes through here, so that an app's callbacks run in
/// the order they were queued, between its own `DispatchQueue.main.async` blocks, as with MobileFirst.
enum MainThread {
    /// Runs `body` on the main queue (the main actor's executor), after the current turn of the caller.
    static func async(_ body: @escaping @MainActor @Sendable () -> Void) {
        DispatchQueue.main.async { MainActor.assumeIsolated { body() } }
    }
}
