// One file on purpose: the bridge carries out its machines' decisions and filters each direction's messages, with
// state private to it. What is decided apart: `WebSocketBridgeStateMachine` (the sides, the upstream's connection,
// the close handshake), `WebSocketCredentialsStateMachine` (the deadline and the revalidation in flight). Beside it:
// `WebSocketSideHandler` and `WebSocketFrameReadingHandler` (the pipelines' ends), `WebSocketFrameWire` (frames'
// bytes both ways), `WebSocketBridge+Sides` (its per-side storage), `WebSocketRelay` (the rules it applies).

import GatehouseProtocol
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// An accepted WebSocket relayed to its upstream on the client connection's event loop: frames go from one socket
/// to the other as `WebSocketFrameReader` reads them and as they came, with no task, no async sequence and no message assembly, so that an idle
/// WebSocket costs two channels and this object.
///
/// It keeps ``WebSocketRelay``'s rules: text messages with the gateway's reserved prefix are dropped both ways
/// (warned once per direction); a client's in-band answer is checked by the realm (on a task) when the realm
/// revalidates, never forwarded; at the deadline the client is challenged in band, or both sides are closed (1008
/// to the client, 1001 upstream); messages are bounded by `maxMessageSize` (1009); an upstream that cannot be
/// reached closes the client with 1011. Frames are relayed as they are (fragments, pings, pongs and the close
/// handshake end to end), written as they came (a client's with its own mask key, its payload never copied).
/// Backpressure: a side's reads stop while the other side's socket is full.
///
/// With the service's inactivity timeout, or KAAZING's extensions negotiated (``KaazingExtensionsNegotiation``), it
/// also keeps the client alive as KAAZING Gateway does (``WebSocketKeepAliveStateMachine``: pings after half the
/// timeout without reading, the connection closed after all of it, a `PONG` when it wrote nothing for three
/// quarters of it under `x-kaazing-idle-timeout`); the client's pong that answers the gateway's ping is the gateway's,
/// never relayed. Under
/// `x-kaazing-ping-pong` its pings and pongs to the client are extended ones, it answers the client's pings itself
/// (extended with extended, standard with standard), and an upstream text message that begins with the control
/// bytes goes after an escape frame, a client's escape frame is removed (``KaazingExtensions``).
final class WebSocketBridge {
    enum Side {
        case client, upstream

        var other: Side { self == .client ? .upstream : .client }
    }

    /// Where the upstream is and what its upgrade request says.
    struct Upstream {
        var key: UpstreamKey
        /// The request target (the upstream's path and query).
        var target: String
        /// The `Host` value.
        var authority: String
        /// The `Sec-WebSocket-Protocol` asked of the upstream (the application's protocols), if any.
        var protocols: String? = nil
    }

    /// One direction's progress through the current data message.
    private struct MessageFilter {
        enum Mode { case idle, pass, drop, held, answer }
        var mode = Mode.idle
        /// Frames of a text message kept until its first bytes show whether it is the gateway's.
        var held: [WebSocketFrame] = []
        /// The message's unmasked bytes seen so far (while held, or an answer being read).
        var bytes = ByteBuffer()
        var size = 0
        var dropped = 0
        /// What stands in a direction's place while its filter is out (nothing is allocated for it).
        static let vacant = MessageFilter()
    }

    private let relay: WebSocketRelay
    private let upstreamTarget: Upstream
    private let statistics: GatewayStatistics
    private let openWebSockets: OpenWebSockets
    private let tls: UpstreamPools
    private let eventLoop: any EventLoop
    /// The frames the client gets once the upstream accepted, before any of the upstream's, given the sub-protocol
    /// the upstream selected: KAAZING's inner `101` (``KaazingHandshakeHandler``). `nil`: the client had its `101`.
    private let opening: ((String?) -> [WebSocketFrame])?
    private var handlers = SideHandlers()
    /// The sides' connections, the upstream's, the close handshake and the end (``WebSocketBridgeStateMachine``).
    private var machine = WebSocketBridgeStateMachine()
    private var flushPending = Sides()
    /// The frames relayed so far, added to the metrics when the connection ends.
    private var relayedFrames = RelayedFrames()
    /// Each direction's filter. Taken out while a frame is read (``data(_:from:)``) and put back, so that its
    /// buffers are never shared and never copied on write.
    private var clientFilter = MessageFilter()
    private var upstreamFilter = MessageFilter()
    /// Client frames received before the upstream's upgrade completed.
    private var waiting: [WebSocketFrame] = []
    private var upstreamChannel: (any Channel)?
    private var finished: Bool { machine.finished }
    /// The credentials' deadline and the in-band revalidation in flight (``WebSocketCredentialsStateMachine``).
    private var credentials: WebSocketCredentialsStateMachine
    private var timer: Scheduled<Void>?
    private var drainKey: Int?
    /// KAAZING's extensions negotiated with the client, and the service's inactivity timeout.
    private let extensions: KaazingExtensionsNegotiation
    /// The inactivity timeout's reads, writes and pings (``WebSocketKeepAliveStateMachine``); `nil`: none.
    private var keepAlive: WebSocketKeepAliveStateMachine?
    private var keepAliveTimer: Scheduled<Void>?
    /// Under `x-kaazing-ping-pong`: the client's last text message was the escape frame, so its next one is data.
    private var clientEscaped = false
    private static let reserved = Array(GatewayRevalidation.reservedPrefix.utf8)
    private static let answer = Array(GatewayRevalidation.answerPrefix.utf8)

    init(relay: WebSocketRelay, upstream: Upstream, statistics: GatewayStatistics, openWebSockets: OpenWebSockets, tls: UpstreamPools,
         eventLoop: any EventLoop, extensions: KaazingExtensionsNegotiation = .none, opening: ((String?) -> [WebSocketFrame])? = nil) {
        self.relay = relay
        self.extensions = extensions
        self.opening = opening
        self.upstreamTarget = upstream
        self.statistics = statistics
        self.openWebSockets = openWebSockets
        self.tls = tls
        self.eventLoop = eventLoop
        self.credentials = WebSocketCredentialsStateMachine(
            deadline: relay.deadline,
            revalidation: relay.revalidation.map { .init(challenge: $0.challenge, grace: $0.grace) })
    }

    private var logger: Logger { relay.logger }

    // MARK: Life cycle

    /// A side's handler is in its pipeline (the client's: or an emulated WebSocket is created).
    func attached(_ handler: any WebSocketBridgeSide, side: Side) {
        handlers[side] = handler
        switch machine.attached(side) {
        case .start: start()
        case .closeIt: handler.close()
        case .none: break
        }
    }

    /// The upstream's upgrade is complete (its HTTP handlers gone): the client's frames flow.
    private func upstreamReady() {
        guard machine.upstreamReady() else {
            handlers[.upstream]?.close()
            return
        }
        if let timeout = extensions.inactivityTimeout, extensions.pings || extensions.idleTimeout {
            // From now on: before it, KAAZING's inner `101` has not been written, and nothing may come before it.
            keepAlive = WebSocketKeepAliveStateMachine(inactivityTimeout: timeout, pings: extensions.pings, pongs: extensions.idleTimeout, now: .now)
            scheduleKeepAlive()
        }
        let frames = waiting
        waiting = []
        for frame in frames { received(frame, from: .client) }
        readComplete(.client)
        handlers[.client]?.resumeReads()
    }

    private func start() {
        statistics.webSocketOpened(service: relay.serviceName)
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let eventLoop = eventLoop
        drainKey = openWebSockets.add { code, reason in
            eventLoop.execute { bound.value.shutDown(code, reason: reason) }
        }
        carryOut(credentials.started())
        connectUpstream(bound)
    }

    private func connectUpstream(_ bound: NIOLoopBound<WebSocketBridge>) {
        handlers[.client]?.pauseReads()
        let sslContext: NIOSSLContext?
        do {
            sslContext = upstreamTarget.key.tls ? try tls.tlsContext() : nil
        } catch {
            upstreamUnavailable(error)
            return
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: upstreamTarget.authority)
        for field in relay.extraHeaders { headers.add(name: field.name.rawName, value: field.value) }
        if let protocols = upstreamTarget.protocols { headers.add(name: "Sec-WebSocket-Protocol", value: protocols) }
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: upstreamTarget.target, headers: headers)
        let host = upstreamTarget.key.host
        let maxFrameSize = relay.maxMessageSize
        let port = upstreamTarget.key.port
        UpstreamTLS.connect(on: eventLoop, host: host, port: port, tls: sslContext) { channel in
            let upgrader = NIOTypedWebSocketClientUpgrader<Bool>(
                maxFrameSize: maxFrameSize, enableAutomaticErrorHandling: false,
                upgradePipelineHandler: { channel, response in
                    channel.eventLoop.makeCompletedFuture {
                        bound.value.upstreamAccepted(response)
                        // The frames are read by a reader in front of NIO's decoder, which the upgrader installed:
                        // the reader takes every byte, so the decoder, whose removal takes effect a moment later,
                        // never sees one.
                        let operations = channel.pipeline.syncOperations
                        let side = WebSocketSideHandler(side: .upstream, bridge: bound.value)
                        let decoder = try operations.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self)
                        try operations.addHandler(WebSocketFrameReadingHandler(maxFrameSize: maxFrameSize, side: side), position: .before(decoder))
                        operations.removeHandler(decoder, promise: nil)
                        try operations.addHandler(side)
                        return true
                    }
                })
            let configuration = NIOTypedHTTPClientUpgradeConfiguration<Bool>(
                upgradeRequestHead: head, upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(false) })
            var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
            pipeline.leftOverBytesStrategy = .forwardBytes
            let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
            upgraded.assumeIsolated().whenComplete { result in
                switch result {
                case .success(true):
                    // After the upgrade handler has left the pipeline.
                    channel.eventLoop.assumeIsolated().execute { bound.value.upstreamReady() }
                case .success(false): bound.value.upstreamUnavailable(nil)
                case .failure(let error): bound.value.upstreamUnavailable(error)
                }
                if case .success(true) = result {} else { channel.close(promise: nil) }
            }
        }
        .assumeIsolated()
        .whenComplete { result in
            switch result {
            case .success(let channel):
                bound.value.upstreamChannel = channel
                if bound.value.finished { channel.close(promise: nil) }
            case .failure(let error):
                bound.value.upstreamUnavailable(error)
            }
        }
    }

    /// The upstream answered `101`, before any of its frames is read: the client's opening, if it waits for one.
    private func upstreamAccepted(_ response: HTTPResponseHead) {
        guard let opening, !finished, let client = handlers[.client] else { return }
        for frame in opening(response.headers.first(name: "Sec-WebSocket-Protocol")) { client.write(frame) }
        client.flush()
        keepAlive?.wrote(now: .now)
    }

    private func upstreamUnavailable(_ error: (any Error)?) {
        guard machine.upstreamFailed() else { return }
        relay.onUpstreamError(error.map { "\($0)" } ?? "upgrade refused")
        logger.debug("WebSocket upstream failed", metadata: ["upstream": .string(relay.upstreamForLogs), "error": .string("\(error.map { "\($0)" } ?? "upgrade refused")")])
        sendClose(to: .client, code: .unexpectedServerError, reason: "upstream unavailable")
        finishIfDone()
    }

    /// A side's connection closed.
    func closed(_ side: Side) {
        handlers[side] = nil
        switch machine.closed(side) {
        case .closeOther: sendClose(to: side.other, code: .normalClosure, reason: "")
        case .dropUpstreamConnection: upstreamChannel?.close(promise: nil)
        case .none: break
        }
        finishIfDone()
    }

    private func finishIfDone() {
        guard let finish = machine.finish() else { return }
        timer?.cancel()
        timer = nil
        keepAliveTimer?.cancel()
        keepAliveTimer = nil
        if let drainKey { openWebSockets.remove(drainKey) }
        drainKey = nil
        if finish.counted {
            statistics.webSocketClosed()
            statistics.webSocketFrames(service: relay.serviceName, relayedFrames)
        }
        if finish.dropUpstreamConnection { upstreamChannel?.close(promise: nil) }
    }

    /// Graceful shutdown: the client is told to go away (1001), the upstream that the relay ends.
    func shutDown(_ code: WebSocketErrorCode, reason: String) {
        guard !finished else { return }
        sendClose(to: .client, code: code, reason: reason)
        sendClose(to: .upstream, code: .normalClosure, reason: "")
    }

    // MARK: Frames

    func received(_ frame: WebSocketFrame, from side: Side) {
        if side == .client { keepAlive?.read(now: .now) }
        switch machine.arrival(from: side) {
        case .relay: break
        case .hold:
            waiting.append(frame)
            return
        case .drop:
            return
        }
        switch frame.opcode {
        case .connectionClose:
            closeReceived(frame, from: side)
        case .ping where side == .client && extensions.pingPong:
            // KAAZING's `PingPongFilter`: the browser's own ping, answered by the gateway with a standard pong.
            writeToClient(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
        case .pong where side == .client && !extensions.pingPong && keepAlive?.awaitingPong == true:
            // The answer to the gateway's own ping: the gateway's, not relayed (any other pong answers the upstream's
            // ping, or is the client's heartbeat, and goes on as it came).
            keepAlive?.pongRead(now: .now)
        case .ping, .pong:
            forward(frame, from: side)
        case .text, .binary, .continuation:
            data(frame, from: side)
        default:
            // Reserved opcodes: a protocol error.
            sendClose(to: side, code: .protocolError, reason: "")
        }
    }

    func readComplete(_ side: Side) {
        let target = side.other
        if flushPending.remove(target) { handlers[target]?.flush() }
    }

    func writabilityChanged(_ side: Side) {
        guard let handler = handlers[side] else { return }
        if handler.isWritable { handlers[side.other]?.resumeReads() }
    }

    private func closeReceived(_ frame: WebSocketFrame, from side: Side) {
        let other = side.other
        switch machine.closeReceived(from: side) {
        case .answered(let relayToOther):
            // The answer to a close this side was sent: its handshake is complete. When the other side started it,
            // the answer goes back there.
            if relayToOther, let handler = handlers[other] {
                if other == .client {
                    write(frame, relayedTo: other, by: handler, thenClose: true)
                } else {
                    write(frame, relayedTo: other, by: handler)
                    handler.flush()
                    scheduleForcedClose(other)
                }
            }
            handlers[side]?.close()
        case .relayToOther:
            // This side starts the handshake: the other answers it through the bridge.
            guard let handler = handlers[other] else { return }
            write(frame, relayedTo: other, by: handler)
            handler.flush()
            scheduleForcedClose(other)
            scheduleForcedClose(side)
        case .answerItself:
            // Nobody to relay it to: the bridge answers.
            var code = frame.unmaskedData
            let echoed = code.readWebSocketErrorCode() ?? .normalClosure
            var data = ByteBuffer()
            data.write(webSocketErrorCode: echoed)
            handlers[side]?.writeAndClose(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: side == .upstream ? .random() : nil, data: data))
        }
    }

    private func data(_ frame: WebSocketFrame, from side: Side) {
        var filter = MessageFilter.vacant
        switch side {
        case .client: swap(&filter, &clientFilter)
        case .upstream: swap(&filter, &upstreamFilter)
        }
        defer {
            switch side {
            case .client: swap(&filter, &clientFilter)
            case .upstream: swap(&filter, &upstreamFilter)
            }
        }
        if frame.opcode != .continuation {
            filter.size = 0
            filter.mode = frame.opcode == .text ? .held : .pass
            filter.held = []
            filter.bytes.clear()
        }
        filter.size += frame.length
        if filter.size > relay.maxMessageSize {
            sendClose(to: side, code: .messageTooLarge, reason: "")
            sendClose(to: side.other, code: .normalClosure, reason: "")
            return
        }
        switch filter.mode {
        case .idle, .pass:
            forward(frame, from: side)
        case .drop:
            break
        case .answer:
            var bytes = frame.unmaskedData
            filter.bytes.writeBuffer(&bytes)
            if frame.fin { revalidate(String(buffer: filter.bytes)) }
        case .held:
            let isAnswerSide = side == .client && relay.revalidation != nil
            let needed = isAnswerSide ? Self.answer.count : Self.reserved.count
            // Only the bytes the prefixes need are unmasked; the frames are relayed as they came.
            if filter.bytes.readableBytes < needed {
                var bytes = frame.data.getSlice(at: frame.data.readerIndex, length: min(needed - filter.bytes.readableBytes, frame.data.readableBytes))!
                if let key = frame.maskKey { bytes.webSocketUnmask(key) }
                filter.bytes.writeBuffer(&bytes)
            }
            filter.held.append(frame)
            guard filter.bytes.readableBytes >= needed || frame.fin else { break }
            let view = filter.bytes.readableBytesView
            if side == .client, extensions.pingPong, let kind = pingPongText(view, length: filter.size, fin: frame.fin) {
                // A message beginning with KAAZING's control bytes: data after the escape frame, else the gateway's.
                let held = filter.held
                filter.held = []
                if kind == .data {
                    filter.mode = .pass
                    for frame in held { forward(frame, from: side) }
                } else {
                    filter.mode = .drop
                    pingPongReceived(kind)
                }
            } else if isAnswerSide, view.starts(with: Self.answer) {
                // An answer: read whole, from the frames held so far.
                filter.mode = .answer
                filter.bytes.clear()
                for held in filter.held {
                    var bytes = held.unmaskedData
                    filter.bytes.writeBuffer(&bytes)
                }
                filter.held = []
                if frame.fin { revalidate(String(buffer: filter.bytes)) }
            } else if view.starts(with: Self.reserved) {
                filter.mode = .drop
                filter.held = []
                filter.dropped += 1
                logger.log(level: filter.dropped == 1 ? .warning : .debug,
                           side == .client ? "dropped a client frame with the gateway's reserved prefix" : "dropped an upstream frame with the gateway's reserved prefix",
                           metadata: ["upstream": .string(relay.upstreamForLogs), "dropped": .stringConvertible(filter.dropped)])
            } else {
                filter.mode = .pass
                if side == .upstream, extensions.pingPong, view.starts(with: KaazingExtensions.controlBytes) {
                    // A message the client would take for an extended frame: the escape frame before it.
                    writeToClient(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: KaazingExtensions.escape)), flush: false)
                }
                for held in filter.held { forward(held, from: side) }
                filter.held = []
            }
            filter.bytes.clear()
        }
        if frame.fin, filter.mode != .held { filter.mode = .idle }
    }

    /// Writes `frame` to the other side.
    private func forward(_ frame: WebSocketFrame, from side: Side) {
        let target = side.other
        guard machine.mayWrite(to: target), let handler = handlers[target] else { return }
        write(frame, relayedTo: target, by: handler)
        flushPending.insert(target)
        if !handler.isWritable { handlers[side]?.pauseReads() }
    }

    /// Writes `frame` to `target` as it came when it may go so — a client's frame upstream with the client's key and
    /// its masked payload, an upstream's unmasked frame to the client — with no copy of its payload
    /// (``WebSocketSideHandler/writeAsItCame(_:)``); anything else through NIO's encoder, as ``relayed(_:to:)`` says.
    /// `thenClose`: flushed, and `target`'s connection closed once it is written (the answer to a close).
    private func write(_ frame: WebSocketFrame, relayedTo target: Side, by handler: any WebSocketBridgeSide, thenClose: Bool = false) {
        let mayGoAsItCame = target == .upstream ? frame.maskKey != nil : frame.maskKey == nil
        if target == .client { keepAlive?.wrote(now: .now) }
        let wentAsItCame = mayGoAsItCame && handler.writeAsItCame(frame, thenClose: thenClose)
        relayedFrames.count(to: target, asReceived: wentAsItCame)
        if wentAsItCame { return }
        if thenClose {
            handler.writeAndClose(relayed(frame, to: target))
        } else {
            handler.write(relayed(frame, to: target))
        }
    }

    /// `frame` as sent to `target` (NIO's encoder masks the data with the frame's key): unmasked towards the
    /// client; towards the upstream masked with the key the client chose for it, so that the upstream receives the
    /// very bytes the client sent (the key was the client's fresh one: RFC 6455 §5.3 asks no more of a relay, and
    /// nginx relays the bytes as they are), and a fresh key for a frame that came without one.
    private func relayed(_ frame: WebSocketFrame, to target: Side) -> WebSocketFrame {
        var out = frame
        if frame.maskKey != nil { out.data = frame.unmaskedData }
        out.maskKey = target == .upstream ? frame.maskKey ?? .random() : nil
        return out
    }

    private func sendClose(to side: Side, code: WebSocketErrorCode, reason: String) {
        guard machine.sendClose(to: side), let handler = handlers[side] else {
            if side == .client, handlers[.client] == nil { finishIfDone() }
            return
        }
        var data = ByteBuffer()
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        handler.write(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: side == .upstream ? .random() : nil, data: data))
        handler.flush()
        scheduleForcedClose(side)
    }

    /// Closes a side that has not answered its close within a few seconds.
    private func scheduleForcedClose(_ side: Side) {
        // Holds the bridge for these seconds at most: no weak reference, which would put every later retain and
        // release of the bridge (several per frame) on the runtime's slow path.
        eventLoop.assumeIsolated().scheduleTask(in: .seconds(5)) {
            guard self.machine.open.contains(side) else { return }
            self.handlers[side]?.close()
        }
    }

    // MARK: KAAZING's keep-alive and extended frames

    /// Writes a frame of the gateway's own to the client (flushed now, or with the frames being relayed).
    private func writeToClient(_ frame: WebSocketFrame, flush: Bool = true) {
        guard machine.mayWrite(to: .client), let client = handlers[.client] else { return }
        client.write(frame)
        if flush { client.flush() } else { flushPending.insert(.client) }
        keepAlive?.wrote(now: .now)
    }

    /// What a client's text message beginning as `view` (its first bytes), `length` bytes so far (all of it when
    /// `fin`), is under `x-kaazing-ping-pong`; `nil`: an ordinary message (the gateway's other filters apply). After
    /// the escape frame a message must begin with the control bytes (then it is data, relayed as it is); a message
    /// that begins with them otherwise is one of the gateway's frames — KAAZING's `PingPongFilter.wsTextReceived`.
    private func pingPongText(_ view: ByteBufferView, length: Int, fin: Bool) -> KaazingExtensions.ClientText? {
        let control = view.starts(with: KaazingExtensions.controlBytes)
        if clientEscaped {
            clientEscaped = false
            return control ? .data : .invalid
        }
        guard control else { return nil }
        guard fin else { return .invalid }
        return KaazingExtensions.clientText(prefix: view, length: length)
    }

    /// One of the client's extended frames: the escape frame remembered, a ping answered with an extended pong, a pong
    /// taken by the keep-alive, anything else a protocol error (1002, as KAAZING closes it).
    private func pingPongReceived(_ kind: KaazingExtensions.ClientText) {
        switch kind {
        case .data:
            break
        case .escape:
            clientEscaped = true
        case .ping:
            writeToClient(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: KaazingExtensions.extendedPong)))
        case .pong:
            keepAlive?.pongRead(now: .now)
        case .invalid:
            logger.debug("closing a WebSocket whose client sent an extended frame that is none", metadata: ["upstream": .string(relay.upstreamForLogs)])
            sendClose(to: .client, code: .protocolError, reason: "")
            sendClose(to: .upstream, code: .normalClosure, reason: "")
        }
    }

    /// Sets the keep-alive's timer for its next instant.
    private func scheduleKeepAlive() {
        keepAliveTimer?.cancel()
        keepAliveTimer = nil
        guard !finished, let instant = keepAlive?.nextWake else { return }
        let nanoseconds = max(0, (instant - ContinuousClock.now).wholeNanoseconds)
        // Cancelled when the relay finishes (`finishIfDone`), so it holds the bridge no longer than the bridge lives.
        keepAliveTimer = eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) {
            self.keepAliveTimer = nil
            self.keepAliveFired()
        }
    }

    /// Carries out what the keep-alive decided now: its ping or pong (extended under `x-kaazing-ping-pong`), or the
    /// end of a connection whose client answered no ping (closed at once, as KAAZING closes it: no close frame).
    private func keepAliveFired() {
        guard !finished, var keepAlive else { return }
        let actions = keepAlive.timerFired(now: .now)
        self.keepAlive = keepAlive
        for action in actions {
            switch action {
            case .ping:
                writeToClient(extensions.pingPong
                    ? WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: KaazingExtensions.extendedPing))
                    : WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer()))
            case .pong:
                writeToClient(extensions.pingPong
                    ? WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: KaazingExtensions.extendedPong))
                    : WebSocketFrame(fin: true, opcode: .pong, data: ByteBuffer()))
            case .close:
                logger.info("closing a WebSocket whose client answered no ping within the inactivity timeout",
                            metadata: ["upstream": .string(relay.upstreamForLogs)])
                handlers[.client]?.close()
                return
            }
        }
        scheduleKeepAlive()
    }

    // MARK: Deadline and revalidation

    /// Carries out what the credentials' machine decided.
    private func carryOut(_ action: WebSocketCredentialsStateMachine.Action) {
        switch action {
        case .none:
            timer?.cancel()
            timer = nil
        case .wake(let instant):
            wake(at: instant)
        case .challenge(let challenge, let reason, let graceEnd):
            logger.debug("revalidating a WebSocket in band", metadata: ["reason": .string(reason)])
            if machine.mayWrite(to: .client), let client = handlers[.client] {
                client.write(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: GatewayRevalidation.challengePrefix + challenge)))
                client.flush()
            }
            wake(at: graceEnd)
        case .expire(let reason, let revalidationFailed):
            timer?.cancel()
            timer = nil
            relay.onExpiry()
            if !revalidationFailed { logger.info("closing an expired WebSocket", metadata: ["reason": .string(reason)]) }
            sendClose(to: .client, code: WebSocketRelay.expiredCloseCode, reason: reason)
            if revalidationFailed {
                sendClose(to: .upstream, code: .normalClosure, reason: "")
            } else {
                sendClose(to: .upstream, code: .goingAway, reason: "client credentials expired")
            }
        }
    }

    /// Sets the timer for `instant`.
    private func wake(at instant: ContinuousClock.Instant) {
        timer?.cancel()
        timer = nil
        guard !finished else { return }
        let nanoseconds = max(0, (instant - ContinuousClock.now).wholeNanoseconds)
        // Cancelled when the relay finishes (`finishIfDone`), so it holds the bridge no longer than the bridge lives.
        timer = eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) {
            self.timer = nil
            guard !self.finished else { return }
            self.carryOut(self.credentials.timerFired(now: .now))
        }
    }

    private func revalidate(_ text: String) {
        guard let revalidation = relay.revalidation else { return }
        let authorization = String(text.dropFirst(GatewayRevalidation.answerPrefix.count))
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let eventLoop = eventLoop
        Task {
            let outcome = await revalidation.outcome(of: authorization)
            eventLoop.execute { bound.value.revalidated(outcome) }
        }
    }

    private func revalidated(_ outcome: WebSocketRelay.Revalidation.Outcome) {
        guard !finished, let revalidation = relay.revalidation else { return }
        var next: WebSocketRelay.Deadline?
        switch outcome {
        case .accepted(let subject): next = revalidation.deadline(subject)
        case .refused: logger.info("closing a WebSocket whose revalidation failed")
        case .differentUser: logger.warning("closing a WebSocket revalidated as another user")
        }
        carryOut(credentials.revalidated(outcome, next: next))
    }
}
