/// The check classes a server knows, by the class name a policy uses in `securityChecks.<name>.class`.
///
/// The built-in classes are `SimpleCaptcha`, `PinCodeAttempts`, `UserLogin`, `TOTP` and `Passkey`. Register your own before the
/// server reads its policy:
/// ```swift
/// var registry = SecurityCheckRegistry.builtIn
/// registry.register("HelloCheck") { name, properties, _ in HelloCheck(name: name, properties: &properties) }
/// ```
public struct SecurityCheckRegistry: Sendable {
    /// Builds a check named `name` from its properties.
    public typealias Factory = @Sendable (_ name: String, _ properties: inout SecurityCheckProperties, _ services: SecurityCheckServices)
        throws -> any SecurityCheck

    public private(set) var factories: [String: Factory] = [:]

    public init() {}

    /// The built-in check classes.
    public static var builtIn: SecurityCheckRegistry {
        var registry = SecurityCheckRegistry()
        registry.register("SimpleCaptcha") { name, properties, _ in SimpleCaptcha(name: name, properties: &properties) }
        registry.register("PinCodeAttempts") { name, properties, _ in PinCodeAttempts(name: name, properties: &properties) }
        registry.register("UserLogin") { name, properties, services in
            UserLogin(name: name, properties: &properties, users: services.users, passwords: services.passwords)
        }
        registry.register("TOTP") { name, properties, services in TOTP(name: name, properties: &properties, services: services) }
        registry.register("Passkey") { name, properties, services in Passkey(name: name, properties: &properties, services: services) }
        return registry
    }

    /// Adds (or replaces) a check class.
    public mutating func register(_ className: String, factory: @escaping Factory) {
        factories[className] = factory
    }
}
