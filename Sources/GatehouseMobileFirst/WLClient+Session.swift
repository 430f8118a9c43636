import Foundation
import GatehouseClient

extension WLClient {
    /// Adds a header to every ``WLResourceRequest`` sent from now on, as MobileFirst's `addGlobalHeader:headerValue:`
    /// does; a global header of the same name is replaced, and a request's own header of that name wins over it.
    /// Unlike MobileFirst's, the SDK's own calls behind a request (registration, pre-authorization, token) do not
    /// carry it.
    public func addGlobalHeader(_ headerName: String!, headerValue value: String!) {
        guard let headerName, let value else { return }
        state.withLock { state in
            state.globalHeaders.removeAll { $0.name.caseInsensitiveCompare(headerName) == .orderedSame }
            state.globalHeaders.append((headerName, value))
        }
    }

    /// Stops sending the header named `headerName` (any case) with every request.
    public func removeGlobalHeader(_ headerName: String!) {
        guard let headerName else { return }
        state.withLock { $0.globalHeaders.removeAll { $0.name.caseInsensitiveCompare(headerName) == .orderedSame } }
    }

    /// The headers added with ``addGlobalHeader(_:headerValue:)``, in the order they were added.
    var globalHeaders: [(name: String, value: String)] { state.withLock { $0.globalHeaders } }

    /// Accepted and kept (``heartBeatInterval``), as MobileFirst's `setHeartBeatInterval:`; **no heartbeat is sent
    /// here**. MobileFirst's heartbeat kept a server-side session alive between requests; Gatehouse keeps no such
    /// session — the registration, the security checks' states and the tokens carry everything, each with its own
    /// expiry — so there is nothing for a heartbeat to keep alive.
    public func setHeartBeatInterval(_ interval: Int) {
        state.withLock { $0.heartBeatInterval = interval }
    }

    /// The interval set with ``setHeartBeatInterval(_:)`` (seconds; MobileFirst's default 420).
    public var heartBeatInterval: Int { state.withLock { $0.heartBeatInterval } }

    /// Sets the device's display name, by which operators find the device (the registration is updated at once
    /// when the client is registered, else at its registration); `completionHandler` gets `nil` or the error, on
    /// the main thread.
    public func setDeviceDisplayName(_ deviceDisplayName: String!,
                                     withCompletionHandler completionHandler: (@MainActor @Sendable ((any Error)?) -> Void)!) {
        let name = deviceDisplayName
        complete({ (_: Bool?, error) in completionHandler?(error) }) { client in
            try await client.setDeviceDisplayName(name)
            return (true, nil)
        }
    }

    /// The device's display name set with ``setDeviceDisplayName(_:withCompletionHandler:)`` (`nil` when none), on the
    /// main thread.
    public func getDeviceDisplayName(completionHandler: (@MainActor @Sendable (String?, (any Error)?) -> Void)!) {
        complete(completionHandler) { client in (try await client.deviceDisplayName, nil) }
    }
}
