/// The question a client may ask a Gatehouse gateway before a WebSocket handshake, whose refusal a WebSocket client
/// cannot read: whether its credentials are admitted to a service. An `OPTIONS` with `Max-Forwards: 0` (RFC 9110
/// §7.6.2) is answered by the gateway itself once the realm admitted it — `200` with ``allow`` and no body — or with
/// the realm's own `401` / `403`; it never reaches the upstream.
public enum GatewayAdmissionCheck {
    /// The methods the gateway relays: the `Allow` of its answer (and of its `405`).
    public static let allow = "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS"
}
