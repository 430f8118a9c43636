import GatehouseProtocol

// The gateway is being written (issue 5).
enum GatewayPlaceholder {}
