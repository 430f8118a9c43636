import GatehouseHTTP
import GatehouseStore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTPTypes

/// `serve`'s requests on the project's own front: each request, collected whole from NIO's HTTP/1 codec (converted
/// to HTTP types), is answered by Hummingbird's router on one task that runs on the connection's event loop
/// (``EventLoopTaskExecutor``: no thread hop), and its answer is written from there. No task per connection, no async
/// channel: a connection costs its handlers; a request, one task. The connection's life is
/// ``RouterConnectionStateMachine``'s; this handler runs its actions.
///
/// The rest of the pipeline is ``ServeFront``'s: head and body deadlines, HTTP/1.0, answers from memory on the loop
/// (``LoopAnswerHandler``), the idle timeout.
final class RouterChannelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var machine: RouterConnectionStateMachine
    private let responder: RouterResponder<GatehouseRequestContext>
    private let serverName: String?
    private let date: HTTPDate
    private let logger: Logger
    private var context: ChannelHandlerContext?
    /// Whether a request's task runs on the connection's event loop; off, on Swift concurrency's shared threads, its
    /// answer's parts handed to the loop.
    private let onEventLoop: Bool
    /// The connection's event loop as a task executor, made once per connection.
    private var executor: EventLoopTaskExecutor?

    init(responder: RouterResponder<GatehouseRequestContext>, onEventLoop: Bool = true, isStream: Bool = false, serverName: String?,
         date: HTTPDate, maxBody: Int, logger: Logger) {
        self.responder = responder
        self.onEventLoop = onEventLoop
        self.serverName = serverName
        self.date = date
        self.logger = logger
        machine = RouterConnectionStateMachine(maxBody: maxBody, isStream: isStream)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        executor = EventLoopTaskExecutor(context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: The channel's events, each one event of the machine

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): run(machine.head(head, allocator: context.channel.allocator))
        case .body(let part): run(machine.body(part))
        case .end: run(machine.end())
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            run(machine.quiesce())
        } else if let event = event as? ChannelEvent, event == .inputClosed {
            run(machine.inputClosed())
        } else if let event = event as? IdleStateHandler.IdleStateEvent, event == .read {
            run(machine.idleTimedOut())
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("a serve connection failed", metadata: ["error": .string("\(error)")])
        run(machine.failed())
    }

    func channelInactive(context: ChannelHandlerContext) {
        _ = machine.failed()
        context.fireChannelInactive()
    }

    private func run(_ action: RouterConnectionStateMachine.Action) {
        guard let context else { return }
        switch action {
        case .none:
            break
        case .respond(let head, let body):
            respond(head, body, context: context)
        case .refuseTooLarge:
            let body = ByteBuffer(string: #"{"errorCode":"PAYLOAD_TOO_LARGE","errorMsg":"The request body is larger than the server accepts."}"#)
            var fields = self.fields(HTTPFields([HTTPField(name: .contentType, value: "application/json; charset=utf-8")]))
            fields[.contentLength] = String(body.readableBytes)
            fields[.connection] = "close"
            context.write(wrapOutboundOut(.head(HTTPResponse(status: .contentTooLarge, headerFields: fields))), promise: nil)
            context.write(wrapOutboundOut(.body(body)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case .close:
            context.close(promise: nil)
        }
    }

    /// `fields` with the `Date` and `Server` every answer carries.
    private func fields(_ fields: HTTPFields) -> HTTPFields {
        Self.fields(fields, date: date, serverName: serverName)
    }

    private static func fields(_ fields: HTTPFields, date: HTTPDate, serverName: String?) -> HTTPFields {
        var fields = fields
        fields[.date] = date.now
        if let serverName { fields[.server] = serverName }
        return fields
    }

    // MARK: A request through the router

    /// Answers a request on one task on the connection's event loop (or on the shared threads when ``onEventLoop`` is
    /// off): the router's answer (an error it did not turn into one is `500`), written part by part from the loop.
    private func respond(_ head: HTTPRequest, _ body: ByteBuffer, context: ChannelHandlerContext) {
        guard let executor else { return }
        let channel = context.channel
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let responder = self.responder, logger = self.logger, date = self.date, serverName = self.serverName
        let answer: @Sendable () async -> Void = {
            let requestContext = GatehouseRequestContext(source: .init(channel: channel, logger: logger))
            var response: Response
            do {
                response = try await responder.respond(to: Request(head: head, body: RequestBody(buffer: body)), context: requestContext)
            } catch {
                logger.debug("an error the router did not answer", metadata: ["error.type": .string("\(type(of: error))")])
                response = Response(status: .internalServerError)
            }
            let writer = LoopResponseBodyWriter(handler: bound, head: HTTPResponse(status: response.status,
                                                                                    headerFields: Self.fields(response.headers, date: date, serverName: serverName)))
            do {
                try await response.body.write(writer)
            } catch {
                // A body that failed part way: the answer cannot be completed, and the connection ends.
                bound.execute { $0.run($0.machine.failed()) }
            }
        }
        if onEventLoop {
            Task(executorPreference: executor) { await StoreCalls.$executor.withValue(executor) { await answer() } }
        } else {
            Task { await answer() }
        }
    }

    /// Writes part of an answer (on the loop); at its end, the machine decides what follows — before the end is
    /// written: NIO's pipelining handler hands the next request on from inside that write.
    fileprivate func write(_ parts: [HTTPResponsePart]) {
        guard let context else { return }
        guard case .end? = parts.last else {
            for part in parts { context.write(wrapOutboundOut(part), promise: nil) }
            return
        }
        let next = machine.answerEnded()
        for part in parts.dropLast() { context.write(wrapOutboundOut(part), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(parts[parts.count - 1]), promise: nil)
        run(next)
    }
}

/// The writer of an answer's body, on the connection's event loop: the head goes out with the first part (or with the
/// end, for an empty body) and the end flushes — one flush an answer.
private struct LoopResponseBodyWriter: ResponseBodyWriter {
    let handler: NIOLoopBound<RouterChannelHandler>
    var head: HTTPResponse?

    mutating func write(_ buffer: ByteBuffer) async throws {
        var parts: [HTTPResponsePart] = []
        if let head {
            parts.append(.head(head))
            self.head = nil
        }
        parts.append(.body(buffer))
        handler.execute { [parts] in $0.write(parts) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        var parts: [HTTPResponsePart] = []
        if let head { parts.append(.head(head)) }
        parts.append(.end(trailingHeaders))
        handler.execute { [parts] in $0.write(parts) }
    }
}

extension NIOLoopBound where Value == RouterChannelHandler {
    /// Runs `work` with the handler on its event loop: at once when already there (a request's task on the loop), else
    /// submitted to the loop (a task on the shared threads).
    func execute(_ work: @escaping @Sendable (RouterChannelHandler) -> Void) {
        if eventLoop.inEventLoop {
            work(value)
        } else {
            eventLoop.execute { work(self.value) }
        }
    }
}
