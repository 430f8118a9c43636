import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Makes Hummingbird's upgrade redirect safe.
///
/// An `Upgrade: websocket` request that arrives on a connection already used for plain HTTP never reaches the
/// gateway: Hummingbird answers `307` with `Location` set to the raw request target, so that the client upgrades
/// on a new connection. A target such as `//evil.example/x` would make that a protocol-relative redirect to
/// another host. This handler rewrites such a `Location` to the normalised target (``RequestTarget``: it always
/// starts with a single `/`), or turns the answer into a `400` when the target is malformed.
final class UpgradeRedirectHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// For each request whose answer is not written yet: whether Hummingbird treats it as an upgrade.
    private var upgrades: [Bool] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            upgrades.append(head.headerFields[.upgrade] == "websocket")  // Hummingbird's own test
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = unwrapOutboundIn(data), head.status.code >= 200 else {
            context.write(data, promise: promise)
            return
        }
        let upgrade = upgrades.isEmpty ? false : upgrades.removeFirst()
        guard upgrade, head.status == .temporaryRedirect, let location = head.headerFields[.location] else {
            context.write(data, promise: promise)
            return
        }
        if let target = try? RequestTarget(parsing: location) {
            head.headerFields[.location] = target.description
        } else {
            head.status = .badRequest
            head.headerFields[.location] = nil
        }
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}
