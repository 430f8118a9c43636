import GatehouseProtocol

/// Why the admin API refused an operator's request, in the service's terms; `GatehouseError.init(_:)` (HTTP/) says
/// each as HTTP: its status, its MobileFirst-shaped code and its fields.
enum AdminError: Error, Sendable, Equatable {
    /// A parameter or the body is malformed (the message says how it must be).
    case invalidRequest(String)
    /// No bearer token, or one that no longer holds; `challenge` is the `WWW-Authenticate` value.
    case unauthenticated(String, challenge: String)
    /// A token without the scope the operation needs; `challenge` is the `WWW-Authenticate` value.
    case forbidden(String, challenge: String)
    /// What the operation names does not exist.
    case notFound(String)
    /// The operation lost a race, or cannot be done on what is there now.
    case conflict(String)
    /// The key to retire is the one every node signs with.
    case currentKey(String)
    /// The policy sent is not valid; `errors` are its errors as the validation answer lists them.
    case invalidPolicy(String, errors: [JSON])
}
