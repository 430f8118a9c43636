public import NIOSSL

/// How ``GatewayWebSocketClient`` opens a WebSocket: the handshake's extra header fields and sub-protocols, the
/// timeouts, the largest message, and TLS for `wss` URLs.
public struct GatewayWebSocketConfiguration: Sendable {
    /// Header fields added to the upgrade request (an `Authorization`, say), in order.
    public var headers: [(name: String, value: String)]
    /// The sub-protocols offered (`Sec-WebSocket-Protocol`), in order of preference; the server's choice must be one.
    public var protocols: [String]
    /// How long the TCP connection may take to open.
    public var connectTimeout: Duration
    /// How long the upgrade may take once connected (TLS and the HTTP exchange), and the closing handshake after a
    /// close frame is sent.
    public var handshakeTimeout: Duration
    /// The largest message accepted, its fragments joined: a larger one closes the connection with `1009`.
    public var maxMessageSize: Int
    /// The largest single frame accepted.
    public var maxFrameSize: Int
    /// TLS for `wss` URLs: trust roots, certificate verification (full, with the host name checked, by default),
    /// client certificates. Not used for `ws` URLs.
    public var tls: TLSConfiguration
    /// The name sent in SNI and checked against the server's certificate, when it is not the URL's host.
    public var serverName: String?

    /// The defaults: no extra fields, no sub-protocol, 10 s to connect and 10 s to upgrade, messages up to 16 MiB in
    /// frames up to 1 MiB, TLS with the system's trust roots and full verification.
    public init(
        headers: [(name: String, value: String)] = [], protocols: [String] = [],
        connectTimeout: Duration = .seconds(10), handshakeTimeout: Duration = .seconds(10),
        maxMessageSize: Int = 1 << 24, maxFrameSize: Int = 1 << 20,
        tls: TLSConfiguration = .makeClientConfiguration(), serverName: String? = nil
    ) {
        self.headers = headers
        self.protocols = protocols
        self.connectTimeout = connectTimeout
        self.handshakeTimeout = handshakeTimeout
        self.maxMessageSize = maxMessageSize
        self.maxFrameSize = maxFrameSize
        self.tls = tls
        self.serverName = serverName
    }
}
