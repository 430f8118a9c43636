import Dispatch
import Foundation
import GatehouseClient

/// A ``KGChallengeHandler`` as the SDK's `HTTPChallengeHandler`, for the SDK's WebSocket client: ``KGChallengeHandler/handle(_:)``
/// runs on a serial dispatch queue of its own, off the main thread and off Swift's cooperative pool, so that an app
/// blocking in it (a login handler waiting on a semaphore) blocks nothing else.
struct KGChallengeHandlerBridge: HTTPChallengeHandler {
    let handler: KGChallengeHandler
    let queue: DispatchQueue

    func canHandle(_ request: ChallengeRequest) -> Bool {
        handler.canHandle(KGChallengeRequest(request))
    }

    func handle(_ request: ChallengeRequest) async -> ChallengeResponse? {
        let handler = handler
        let queue = queue
        let response: KGChallengeResponse? = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: handler.handle(KGChallengeRequest(request))) }
        }
        guard let response, let credentials = response.credentials else { return nil }
        return ChallengeResponse(credentials: credentials,
                                 nextChallengeHandler: response.nextChallengeHandler.map { KGChallengeHandlerBridge(handler: $0, queue: queue) })
    }
}
