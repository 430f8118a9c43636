// The gateway's WebSocket client speaks with the SDK's challenge handlers (`HTTPChallengeHandler`,
// `BasicChallengeHandler`, ...): one import in a tool or an app.
@_exported public import GatehouseClient
