import GatehouseProtocol

/// The Gatehouse client SDK (in progress): speaks the MobileFirst 8.0 runtime protocol.
public enum GatehouseClientInfo {
    /// The protocol types this SDK shares with the server.
    public static let protocolModule = "GatehouseProtocol"
}
