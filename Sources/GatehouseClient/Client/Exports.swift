// The wire types an app meets in the SDK's API come with `import GatehouseClient` (one import in an app), and only
// those: a challenge's and an answer's values (`JSON`, `JSONObject`), what registration sends (`DeviceData`,
// `ApplicationData`, `RegistrationData`), a token's claims (`AccessTokenClaims`) and a certificate's public-key pin
// (`PublicKeyPin`, `PinnedHTTPTransport`'s). The rest of GatehouseProtocol (JWS, the runtime API's requests and
// answers, ...) is the server's and the SDK's business; a program that speaks the protocol itself imports
// GatehouseProtocol.
@_exported import enum GatehouseProtocol.JSON
@_exported import typealias GatehouseProtocol.JSONObject
@_exported import struct GatehouseProtocol.DeviceData
@_exported import struct GatehouseProtocol.ApplicationData
@_exported import struct GatehouseProtocol.RegistrationData
@_exported import struct GatehouseProtocol.AccessTokenClaims
@_exported import struct GatehouseProtocol.PublicKeyPin

/// The SDK's types by a name that cannot be shadowed: in a module that declares its own `AccessToken` or
/// `SecurityCheckChallengeHandler` (GatehouseMobileFirst does, with MobileFirst's API), `GatehouseClient.AccessToken`
/// does not name this module's type (`GatehouseClient` is the client class), `GatehouseSDK.AccessToken` does.
public enum GatehouseSDK {
    public typealias AccessToken = GatehouseClient_AccessToken
    public typealias SecurityCheckChallengeHandler = GatehouseClient_SecurityCheckChallengeHandler
}

public typealias GatehouseClient_AccessToken = AccessToken
public typealias GatehouseClient_SecurityCheckChallengeHandler = SecurityCheckChallengeHandler
