// The wire types an app needs with the SDK (`JSON`, `JSONObject`, `DeviceData`, `Scope`, ...) come with
// `import GatehouseClient`: one import in an app.
@_exported import GatehouseProtocol
