public import GatehouseProtocol

/// MobileFirst's sample captcha check (SimpleCaptcha): challenges with `{"captcha":"X + Y","message":...}` and accepts
/// `{"answer":"Z"}` when Z = X + Y.
///
/// Properties: `maxOperator` (operands are drawn from `0..<maxOperator`, default 10) and those of
/// ``CredentialsValidationConfiguration``.
public struct SimpleCaptcha: CredentialsValidationSecurityCheck {
    public struct CheckData: SecurityCheckData {
        public var expectedResult: Int?
        public var errorMsg: String?
        public init() {}
    }

    public let name: String
    public let validation: CredentialsValidationConfiguration
    public let maxOperator: Int

    public init(name: String, properties: inout SecurityCheckProperties) {
        self.name = name
        validation = CredentialsValidationConfiguration(properties: &properties)
        maxOperator = properties.int("maxOperator", default: 10, range: 1...1_000_000)
    }

    public func validateCredentials(_ credentials: JSONObject, state: inout State, client: inout ClientContext) async throws -> Bool {
        let answer = credentials["answer"].flatMap { $0.intValue ?? $0.stringValue.flatMap { Int($0) } }
        if let answer, let expected = state.data.expectedResult, answer == expected {
            state.data.errorMsg = nil
            state.data.expectedResult = nil
            return true
        }
        state.data.errorMsg = credentials["answer"] == nil ? "Please provide an answer" : "Wrong answer, try again"
        return false
    }

    public func createChallenge(state: inout State, client: inout ClientContext) async throws -> JSONObject? {
        let a = Int.random(in: 0..<maxOperator)
        let b = Int.random(in: 0..<maxOperator)
        state.data.expectedResult = a + b
        let message = state.usedAttempts == 0 ? nil : state.data.errorMsg
        return ["captcha": .string("\(a) + \(b)"), "message": JSON(message)]
    }
}

/// The stored data without Foundation's coders: the sorted encoder's bytes, the synthesized `Decodable`'s reading.
extension SimpleCaptcha.CheckData: JSONTextWritable, JSONValueDecodable {
    package func write(to text: inout JSONText) {
        text.object { data in
            data.member("errorMsg", errorMsg)
            data.member("expectedResult", expectedResult.map(Int64.init))
        }
    }

    package init?(json: JSON) {
        guard case .object = json, let errorMsg = json.optionalString("errorMsg"), let expected = json.optionalInt("expectedResult") else { return nil }
        self.init()
        self.errorMsg = errorMsg
        if let expected {
            guard let result = Int(exactly: expected) else { return nil }
            expectedResult = result
        }
    }
}
