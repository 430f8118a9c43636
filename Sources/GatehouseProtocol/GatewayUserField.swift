/// The field in which the gateway names the authenticated user on every request and WebSocket upgrade it relays
/// upstream (a client's own field of that name is removed first): what an upstream reads to know who is calling.
package enum GatewayUserField {
    package static let name = "X-Gateway-User"
}
