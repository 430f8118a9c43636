public import GatehouseChecks
public import GatehouseProtocol

/// A client registration: what the client registered and the key it proves itself with.
public struct ClientRegistrationRecord: Codable, Sendable, Equatable {
    public var clientID: String
    public var data: RegistrationData
    public var publicKey: RSAPublicJWK
    /// Epoch milliseconds.
    public var createdAt: Int64
    /// Epoch milliseconds.
    public var updatedAt: Int64

    public init(clientID: String, data: RegistrationData, publicKey: RSAPublicJWK, createdAt: Int64, updatedAt: Int64) {
        self.clientID = clientID
        self.data = data
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// One versioned piece of a client's state: a check's state, or the client context.
public struct VersionedState: Sendable, Equatable {
    /// The serialized state (JSON).
    public var data: [UInt8]
    /// Increases with every write; 0 means "not stored yet".
    public var version: Int64

    public init(data: [UInt8], version: Int64) {
        self.data = data
        self.version = version
    }
}

/// A write of one piece of client state, applied only if the stored version is still `expectedVersion`.
public struct StateWrite: Sendable, Equatable {
    public var name: String
    /// The version read; 0 when the piece did not exist.
    public var expectedVersion: Int64
    public var data: [UInt8]

    public init(name: String, expectedVersion: Int64, data: [UInt8]) {
        self.name = name
        self.expectedVersion = expectedVersion
        self.data = data
    }
}

/// An authorization code between `az/v1/authorization` and `az/v1/token`. Stored under the SHA-256 of the code.
public struct AuthorizationCodeRecord: Codable, Sendable, Equatable {
    public var codeHash: String
    public var clientID: String
    /// The normalised scope granted (without the mandatory scope).
    public var scope: String
    public var redirectURI: String
    /// Epoch milliseconds after which the code is refused.
    public var expiresAt: Int64
    /// The latest the token may live, epoch milliseconds: min of the checks' expirations and the application cap.
    public var tokenExpiresAt: Int64
    /// The checks that granted the scope.
    public var checks: [String]
    /// The active user's id when the code was issued.
    public var userID: String?
    /// The authentication context class the checks proved (the token's `acr`).
    public var acr: String?
    /// When the active user authenticated, epoch milliseconds (the token's `auth_time`).
    public var authTime: Int64?
    /// What an OpenID Connect code or refresh token carries besides (its nonce, PKCE challenge, session, `amr`):
    /// the OpenID Provider's to read; `nil` for the MobileFirst runtime's codes.
    public var openID: JSONObject?

    public init(codeHash: String, clientID: String, scope: String, redirectURI: String, expiresAt: Int64,
                tokenExpiresAt: Int64, checks: [String], userID: String?, acr: String? = nil, authTime: Int64? = nil,
                openID: JSONObject? = nil) {
        self.openID = openID
        self.codeHash = codeHash
        self.clientID = clientID
        self.scope = scope
        self.redirectURI = redirectURI
        self.expiresAt = expiresAt
        self.tokenExpiresAt = tokenExpiresAt
        self.checks = checks
        self.userID = userID
        self.acr = acr
        self.authTime = authTime
    }
}

/// A token-signing key, kept as PEM.
public struct SigningKeyRecord: Codable, Sendable, Equatable {
    public var kid: String
    /// `ES256`.
    public var algorithm: String
    public var privateKeyPEM: String
    /// Epoch milliseconds.
    public var createdAt: Int64
    /// When an operator retired the key (epoch ms): from then on no node signs or verifies with it, and it leaves
    /// the JWKS, so a leaked key stops working.
    public var retiredAt: Int64?

    public init(kid: String, algorithm: String, privateKeyPEM: String, createdAt: Int64, retiredAt: Int64? = nil) {
        self.kid = kid
        self.algorithm = algorithm
        self.privateKeyPEM = privateKeyPEM
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// Tokens that no longer hold: those of a client granted by a check, or one token by its `jti`.
public struct RevocationRecord: Codable, Sendable, Equatable, Hashable {
    public enum Subject: Codable, Sendable, Equatable, Hashable {
        /// Every token of `clientID` that `check` granted, issued at or before `revokedAt`.
        case grant(clientID: String, check: String)
        /// The token with this `jti`.
        case token(jti: String)
    }

    public var subject: Subject
    /// Epoch milliseconds.
    public var revokedAt: Int64

    public init(subject: Subject, revokedAt: Int64) {
        self.subject = subject
        self.revokedAt = revokedAt
    }
}

/// An account's failed logins as stored (see ``AccountLockoutPolicy``), versioned so that nodes counting at the
/// same time lose no failure.
public struct AccountFailureRecord: Sendable, Equatable {
    public var account: String
    public var state: AccountFailureState
    /// Increases with every write; 0 means "not stored yet".
    public var version: Int64

    public init(account: String, state: AccountFailureState, version: Int64) {
        self.account = account
        self.state = state
        self.version = version
    }
}
