// The gateway's WebSocket client (`GatewayWebSocketClient`) lives in GatehouseClientWebSocket, the SDK's one WebSocket
// client on every platform; `import GatehouseClientNIO` brings it as before.
@_exported public import GatehouseClientWebSocket
