// The serving types of GatehouseHTTP (not a product: its helpers are the package's own) that the server's public API
// names: TLS for clients, the trusted proxies, the tracer. An app that runs the server in Swift imports this module
// alone.
@_exported import class GatehouseHTTP.OTLPTracer
@_exported import class GatehouseHTTP.ReloadableTLS
@_exported import struct GatehouseHTTP.TrustedProxies
