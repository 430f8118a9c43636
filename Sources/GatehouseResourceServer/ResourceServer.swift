import GatehouseProtocol

// The resource-server middleware is being written (issue 3).
enum ResourceServerPlaceholder {}
