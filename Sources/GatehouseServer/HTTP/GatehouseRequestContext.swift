import Hummingbird
import NIOCore

/// The authorization server's request context: Hummingbird's core storage plus the peer's address, for the
/// per-address registration throttle.
public struct GatehouseRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection's peer (the client, or the reverse proxy in front of Gatehouse).
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
