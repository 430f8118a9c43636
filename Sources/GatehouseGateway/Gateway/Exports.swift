// The serving types of GatehouseHTTP (not a product: its helpers are the package's own) that the gateway's public API
// names: TLS for clients, the trusted proxies, the tracer. An app that builds a gateway in Swift imports this module
// alone.
@_exported import class GatehouseHTTP.OTLPTracer
@_exported import class GatehouseHTTP.ReloadableTLS
@_exported import struct GatehouseHTTP.TrustedProxies
