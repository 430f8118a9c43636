// The wire types an app needs with the SDK (`JSON`, `JSONObject`, `DeviceData`, `Scope`, ...) come with
// `import GatehouseClient`: one import in an app.
@_exported import GatehouseProtocol

/// The SDK's types by a name that cannot be shadowed: in a module that declares its own `AccessToken` or
/// `SecurityCheckChallengeHandler` (GatehouseMobileFirst does, with MobileFirst's API), `GatehouseClient.AccessToken`
/// does not name this module's type (`GatehouseClient` is the client class), `GatehouseSDK.AccessToken` does.
public enum GatehouseSDK {
    public typealias AccessToken = GatehouseClient_AccessToken
    public typealias SecurityCheckChallengeHandler = GatehouseClient_SecurityCheckChallengeHandler
}

public typealias GatehouseClient_AccessToken = AccessToken
public typealias GatehouseClient_SecurityCheckChallengeHandler = SecurityCheckChallengeHandler
