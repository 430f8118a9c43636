public import GatehouseProtocol

/// MobileFirst's sample PIN check (PinCodeAttempts): challenges with `{"errorMsg":null|"...","remainingAttempts":N}` and
/// accepts `{"pin":"..."}` when it matches the configured PIN.
///
/// Properties: `pinCode` (default `"1234"`) and those of ``CredentialsValidationConfiguration``, with
/// `maxAttempts` 3 by default as in the sample adapter.
public struct PinCodeAttempts: CredentialsValidationSecurityCheck {
    public struct CheckData: SecurityCheckData {
        public var errorMsg: String?
        public init() {}
    }

    public let name: String
    public let validation: CredentialsValidationConfiguration
    let pinCode: String

    public init(name: String, properties: inout SecurityCheckProperties) {
        self.name = name
        validation = CredentialsValidationConfiguration(properties: &properties, defaults: .init(maxAttempts: 3))
        pinCode = properties.string("pinCode", default: "1234")
        if pinCode.isEmpty { properties.error("pinCode", "must not be empty") }
    }

    public func validateCredentials(_ credentials: JSONObject, state: inout State, client: inout ClientContext) async throws -> Bool {
        guard let pin = credentials["pin"].flatMap({ $0.stringValue ?? $0.intValue.map(String.init) }) else {
            state.data.errorMsg = "The pin code was not provided."
            return false
        }
        if ConstantTime.equals(pin, pinCode) {
            state.data.errorMsg = nil
            return true
        }
        state.data.errorMsg = "The pin code is not valid."
        return false
    }

    public func createChallenge(state: inout State, client: inout ClientContext) async throws -> JSONObject? {
        // A fresh round of attempts starts without an error message.
        let message = state.usedAttempts == 0 ? nil : state.data.errorMsg
        return ["errorMsg": JSON(message), "remainingAttempts": JSON(state.remainingAttempts(validation))]
    }
}

/// The stored data without Foundation's coders: the sorted encoder's bytes, the synthesized `Decodable`'s reading.
extension PinCodeAttempts.CheckData: JSONTextWritable, JSONValueDecodable {
    package func write(to text: inout JSONText) {
        text.object { data in data.member("errorMsg", errorMsg) }
    }

    package init?(json: JSON) {
        guard case .object = json, let errorMsg = json.optionalString("errorMsg") else { return nil }
        self.init()
        self.errorMsg = errorMsg
    }
}
