import GatehouseProtocol
import HTTPTypes

extension GatehouseError {
    /// How HTTP says `error`: the one mapping of the admin service's refusals.
    init(_ error: AdminError) {
        self = switch error {
        case .invalidRequest(let message): .invalidRequest(message)
        case .unauthenticated(let message, let challenge): GatehouseError(.unauthorized, "UNAUTHORIZED", message, headers: [.wwwAuthenticate: challenge])
        case .forbidden(let message, let challenge): GatehouseError(.forbidden, "FORBIDDEN", message, headers: [.wwwAuthenticate: challenge])
        case .notFound(let message): GatehouseError(.notFound, "NOT_FOUND", message)
        case .conflict(let message): GatehouseError(.conflict, "CONFLICT", message)
        case .currentKey(let message): GatehouseError(.conflict, "CURRENT_KEY", message)
        case .invalidPolicy(let message, let errors): GatehouseError(.unprocessableContent, "INVALID_POLICY", message, extra: ["errors": .array(errors)])
        }
    }
}
