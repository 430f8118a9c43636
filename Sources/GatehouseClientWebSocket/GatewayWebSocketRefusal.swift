public import NIOHTTP1

/// A server's answer to an upgrade request that was not `101`: its status, header fields and (the start of) its body.
public struct GatewayWebSocketRefusal: Sendable {
    /// The response's status code (`401` with a challenge, `403`, `502`, ...).
    public var status: Int
    /// The response's header fields.
    public var headers: HTTPHeaders
    /// The response's body, up to 64 KiB.
    public var body: [UInt8]

    /// The `WWW-Authenticate` value (a gateway's challenge), if any.
    public var challenge: String? { headers.first(name: "WWW-Authenticate") }

    init(head: HTTPResponseHead, body: [UInt8]) {
        status = Int(head.status.code)
        headers = head.headers
        self.body = body
    }
}
