import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes
import Synchronization

/// The answers decided for refused WebSocket upgrades, by connection.
///
/// Hummingbird's WebSocket upgrader answers every refused upgrade with a bare `400` and closes the connection.
/// A gateway must answer with its challenge instead (`401` + `WWW-Authenticate`, or `403`), so that a client's
/// challenge handler can log in: `Gateway.shouldUpgrade` records its answer here, and a
/// ``RefusedUpgradeAnswerHandler`` in the connection's pipeline writes it in place of the `400`.
final class RefusedUpgradeAnswers: Sendable {
    private let answers = Mutex<[ObjectIdentifier: GatewayAnswer]>([:])

    func record(_ answer: GatewayAnswer, for channel: any Channel) {
        answers.withLock { $0[ObjectIdentifier(channel)] = answer }
    }

    func take(for channel: any Channel) -> GatewayAnswer? {
        answers.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// A handler for one connection's HTTP pipeline.
    func makeHandler() -> RefusedUpgradeAnswerHandler { RefusedUpgradeAnswerHandler(answers: self) }
}

/// Replaces the upgrader's `400` to a refused WebSocket upgrade with the gateway's answer for that connection.
final class RefusedUpgradeAnswerHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let answers: RefusedUpgradeAnswers

    init(answers: RefusedUpgradeAnswers) {
        self.answers = answers
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(let head) = unwrapOutboundIn(data), head.status == .badRequest,
              let answer = answers.take(for: context.channel)
        else {
            context.write(data, promise: promise)
            return
        }
        var fields = answer.headers
        fields[.connection] = "close"
        fields[.contentLength] = String(answer.body.readableBytes)
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(answer.body)), promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        _ = answers.take(for: context.channel)
        context.fireChannelInactive()
    }
}
