import Crypto
import Foundation
public import GatehouseChecks
public import GatehouseProtocol
import GatehouseStore
import Logging

/// The aggregated answer of a pre-authorization round (the runtime REST API's `preauth/v1/preauthorize`): failures win over challenges, which
/// win over successes; every answer carries `clockSynchronization`.
public struct PreauthorizeOutcome: Sendable {
    public let response: AuthorizationResponse
    /// Epoch ms.
    public let serverTime: Int64

    /// 200, 401 or 403.
    public var status: Int {
        switch response.type {
        case .failure: 403
        case .challenge: 401
        case .success, nil: 200
        }
    }

    /// The JSON body.
    public var body: PreauthorizeResponse {
        var successes = response.successes.mapValues { JSON.object($0.data) }
        successes[ProtocolNames.clockSynchronization] = ["serverTimeStamp": .int(serverTime)]
        switch response.type {
        case .failure: return PreauthorizeResponse(successes: successes, failures: response.failures)
        case .challenge: return PreauthorizeResponse(successes: successes, challenges: response.challenges)
        case .success, nil: return PreauthorizeResponse(successes: successes)
        }
    }
}
