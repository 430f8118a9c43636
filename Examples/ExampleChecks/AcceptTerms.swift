public import GatehouseChecks
public import GatehouseProtocol

/// An example of a custom security check written outside Gatehouse: the user must accept the current terms of use.
///
/// Challenge: `{"terms":"...","version":"2024-01"}`. Answer: `{"accept":"2024-01"}` (the version accepted).
/// Register it with the server before the policy is read:
/// ```swift
/// var configuration = ServerConfiguration(store: try SQLiteStore.open(dataDirectory: ".gatehouse"))
/// configuration.registry.register("AcceptTerms") { name, properties, _ in AcceptTerms(name: name, properties: &properties) }
/// ```
/// and use it in a policy as `securityChecks: { Terms: { class: AcceptTerms, properties: { version: "2024-01" } } }`.
public struct AcceptTerms: CredentialsValidationSecurityCheck {
    public let name: String
    public let validation: CredentialsValidationConfiguration
    let version: String
    let text: String

    public init(name: String, properties: inout SecurityCheckProperties) {
        self.name = name
        // Accepting lasts a day unless configured; declining is not counted against anyone.
        validation = CredentialsValidationConfiguration(
            properties: &properties, defaults: .init(maxAttempts: 1_000, successStateExpirationSec: 86_400))
        version = properties.string("version", default: "1")
        text = properties.string("text", default: "Use this service kindly.")
    }

    public func validateCredentials(_ credentials: JSONObject, state: inout State, client: inout ClientContext) async throws -> Bool {
        credentials["accept"]?.stringValue == version
    }

    public func createChallenge(state: inout State, client: inout ClientContext) async throws -> JSONObject? {
        ["terms": .string(text), "version": .string(version)]
    }
}
