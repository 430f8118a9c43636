public import GatehouseResourceServer
public import Hummingbird
public import NIOCore

/// A request context that knows who the request comes from (the routes' requirement), and the TLS client certificate
/// of its connection.
public protocol ClientRequestContext: ClientCertificateRequestContext {
    /// The client's address: the peer's, or the one a trusted proxy names.
    var clientAddress: String? { get }
    /// The host the client asked for, when a trusted proxy says it; `nil`: the request's own authority.
    var forwardedHost: String? { get }
}

/// The authorization server's request context: Hummingbird's core storage plus who the request comes from.
public struct GatehouseRequestContext: ClientRequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection's peer (the client, or the reverse proxy in front of Gatehouse).
    public let remoteAddress: SocketAddress?
    /// ``remoteAddress``'s IP address as text (formatted once).
    public let peerAddress: String?
    /// The client's address: the peer's, or the one a trusted proxy names (``RequestSourceMiddleware``). What the
    /// throttles count, and the audit log records.
    public var clientAddress: String?
    /// The host the client asked for, when a trusted proxy says it (`X-Forwarded-Host`); `nil`: the request's own.
    public var forwardedHost: String?
    private let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
        remoteAddress = source.channel.remoteAddress
        peerAddress = remoteAddress?.ipAddress
        clientAddress = peerAddress
    }

    /// The certificate the client presented on this request's TLS connection (RFC 8705), if any.
    public func presentedCertificate() async -> PresentedCertificate? { await PresentedCertificate.of(channel) }
}
