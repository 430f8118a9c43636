public import GatehouseProtocol
import HummingbirdBcrypt

/// Username and password against the stored users (bcrypt hashes), with optional remember-me.
///
/// Challenge: `{"errorMsg":null|"...","remainingAttempts":N}`. Answer:
/// `{"username":"john","password":"...","rememberMe":true}`. Properties: `rememberMeDurationSec` (default 0) and
/// those of ``CredentialsValidationConfiguration``.
public struct UserLogin: UserAuthenticationSecurityCheck {
    public struct CheckData: SecurityCheckData {
        public var userID: String?
        public var errorMsg: String?
        public init() {}
    }

    public let name: String
    public let validation: CredentialsValidationConfiguration
    public let rememberMeDurationSec: Int
    let users: any UserDirectory
    let passwords: PasswordVerifier

    public init(name: String, properties: inout SecurityCheckProperties, users: any UserDirectory, passwords: PasswordVerifier? = nil) {
        self.name = name
        validation = CredentialsValidationConfiguration(properties: &properties, defaults: .init(maxAttempts: 3))
        rememberMeDurationSec = properties.int("rememberMeDurationSec", default: 0)
        self.users = users
        self.passwords = passwords ?? SecurityCheckServices(users: users).passwords
    }

    public func validateCredentials(_ credentials: JSONObject, state: inout State, client: inout ClientContext) async throws -> Bool {
        guard let username = credentials["username"]?.stringValue, let password = credentials["password"]?.stringValue,
            !username.isEmpty
        else {
            state.data.errorMsg = "Username and password are required."
            return false
        }
        let user = try await users.user(named: username)
        // Counted per user name across clients and nodes; a locked account answers like a wrong password.
        let valid = try await passwords.verify(password, hash: user?.passwordHash, account: "user:\(username)", now: client.now)
        if valid {
            state.data.userID = username
            state.data.errorMsg = nil
        } else {
            state.data.errorMsg = "Wrong username or password."
        }
        return valid
    }

    public func createChallenge(state: inout State, client: inout ClientContext) async throws -> JSONObject? {
        let message = state.usedAttempts == 0 ? nil : state.data.errorMsg
        return ["errorMsg": JSON(message), "remainingAttempts": JSON(state.remainingAttempts(validation))]
    }

    public func createUser(state: State, client: ClientContext) async throws -> AuthenticatedUser {
        let id = state.data.userID ?? ""
        let record = try await users.user(named: id)
        return AuthenticatedUser(
            id: id, displayName: record?.displayName ?? id, authenticatedAt: client.now, authenticatedBy: name,
            attributes: record?.attributes ?? [:]
        )
    }

    public func rememberCreatedUser(credentials: JSONObject) -> Bool {
        credentials["rememberMe"]?.boolValue ?? (credentials["rememberMe"]?.stringValue == "true")
    }
}

/// The stored data without Foundation's coders: the sorted encoder's bytes, the synthesized `Decodable`'s reading.
extension UserLogin.CheckData: JSONTextWritable, JSONValueDecodable {
    package func write(to text: inout JSONText) {
        text.object { data in
            data.member("errorMsg", errorMsg)
            data.member("userID", userID)
        }
    }

    package init?(json: JSON) {
        guard case .object = json, let errorMsg = json.optionalString("errorMsg"), let userID = json.optionalString("userID") else { return nil }
        self.init()
        self.errorMsg = errorMsg
        self.userID = userID
    }
}
