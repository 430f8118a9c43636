// One file on purpose (about 400 lines, with the half-open bounds of issue 54 and the split-body and encoding rules of issue 53): the session is one state machine — creating, open, closed; the upstream
// sequence, the downstream attached or awaited, the frames kept for it, the heartbeat and abandon timers — whose state
// is private to it; its registry (`EmulatedWebSockets`) and the downstream's handler live apart.
import GatehouseProtocol
import Logging
import NIOCore
import NIOWebSocket

/// A KAAZING client's WebSocket on the emulated transport (``KaazingEmulation``): the client side of a
/// ``WebSocketBridge`` whose frames travel as HTTP requests — the client's in upstream `POST`s, the upstream's in one
/// long downstream response at a time. It lives on the event loop of the connection that created it; the requests that
/// carry it may come on any connection and reach it through ``EmulatedWebSockets``.
///
/// Its life: **creating** (the bridge connects upstream; the create request waits for the upstream's `101`, ``opened``
/// answers it `201` with the protocol the upstream selected, a close before that answers it `502`), **open** (upstream
/// bodies' frames go to the bridge in order of their sequence numbers; the bridge's frames are written to the attached
/// downstream, or kept — bounded — until the client asks for the next one), **closed** (a `CLOSE` and a `RECONNECT`
/// command end the downstream; the registry forgets it). A session whose client asks no downstream for
/// ``abandonedAfter`` is closed as if its connection had dropped.
final class EmulatedWebSocket {
    /// What the create request is answered.
    enum Created {
        /// `201`: the upstream accepted, selecting this sub-protocol (if any).
        case opened(selectedProtocol: String?)
        /// The upstream could not be reached or refused.
        case upstreamUnavailable
    }

    /// Why an upstream or downstream request is refused (`400`; the session fails).
    struct Refusal: Error {
        let description: String
    }

    private enum State {
        case creating((Created) -> Void)
        case open
        case closed
    }

    let id: String
    let eventLoop: any EventLoop
    /// The origin the create came from (``KaazingEmulation`` bridge's `X-Origin`, else `Origin`), which its other
    /// requests must name too.
    let origin: String?
    /// Whether the client said it understands `PING`/`PONG` frames (`X-Accept-Commands: ping`).
    let acceptsPings: Bool
    /// The binary encoding (`cb`, `cbm`): the downstream is `application/octet-stream`, upstream bodies are bytes.
    let binary: Bool
    /// An escaped text encoding (`cte`, `ctem`): the downstream's bytes are escaped, upstream text is unescaped
    /// (``KaazingEmulation/escaped(_:)``).
    let escaped: Bool
    /// Whether the client numbers its requests (its create did): then each must be the next, else none is checked.
    private let sequenced: Bool
    private let maxMessageSize: Int
    private let logger: Logger
    private let registry: EmulatedWebSockets
    private var state: State
    private var bridge: WebSocketBridge?
    private var nextUpstream: UInt64
    private var nextDownstream: UInt64
    /// The downstream response being written, and how many bytes it has carried.
    private var downstream: (any Channel)?
    private var downstreamBytes = 0
    private var downstreamLimit = EmulatedWebSocket.downstreamBytesLimit
    /// Frames written since the last flush; frames kept while no downstream is attached.
    private var outgoing: [UInt8] = []
    private var kept: [UInt8] = []
    /// The upstream's message being received in fragments.
    private var fragments: (text: Bool, bytes: [UInt8])?
    private var abandonTimer: Scheduled<Void>?
    private var heartbeat: Scheduled<Void>?
    /// Whether the client has asked a downstream yet (taken by ``downstreamRequested(sequence:)``): until then the
    /// session is half-open, takes at most ``halfOpenUpstreamLimit`` bytes of upstream bodies and keeps at most
    /// ``halfOpenKeptLimit`` bytes of the upstream's frames (the upstream's reads pause beyond). Set when the
    /// downstream is asked, not when it attaches: its head is written before the connection reaches the session, and
    /// the client's next upstream request may arrive in between (issue 53's flake: a 64 KiB message refused).
    private var downstreamSeen = false
    /// The upstream bodies' bytes before the first downstream, at most ``halfOpenUpstreamLimit``.
    private var halfOpenUpstreamBytes = 0

    /// How long a session waits for its client to ask a downstream before it closes.
    static let abandonedAfter = TimeAmount.seconds(30)
    /// How long a new session waits for its first downstream (KAAZING's client asks it as soon as the create is
    /// answered) before it closes.
    static let firstDownstreamWithin = TimeAmount.seconds(10)
    /// The most bytes of the upstream's frames a session keeps before its first downstream: a half-open session costs
    /// its sockets and this, not twice the largest message (issue 54, finding 6).
    static let halfOpenKeptLimit = 16 * 1024
    /// The most bytes of upstream bodies a session takes before its first downstream: the upstream's answers to more
    /// would wait in the gateway's buffers for a downstream that may never come.
    static let halfOpenUpstreamLimit = 64 * 1024
    /// After this many bytes a downstream response ends with `RECONNECT`, so that the browser lets its text go.
    static let downstreamBytesLimit = 4 * 1024 * 1024
    /// A `NOP` command this often keeps an idle downstream from being cut by a proxy.
    static let heartbeatInterval = TimeAmount.seconds(20)

    init(id: String, eventLoop: any EventLoop, origin: String?, acceptsPings: Bool, binary: Bool = false, escaped: Bool = false,
         createSequence: UInt64?,
         maxMessageSize: Int, logger: Logger, registry: EmulatedWebSockets, created: @escaping (Created) -> Void) {
        self.id = id
        self.eventLoop = eventLoop
        self.origin = origin
        self.acceptsPings = acceptsPings
        self.binary = binary
        self.escaped = escaped
        sequenced = createSequence != nil
        self.maxMessageSize = maxMessageSize
        self.logger = logger
        self.registry = registry
        state = .creating(created)
        nextUpstream = (createSequence ?? 0) + 1
        nextDownstream = (createSequence ?? 0) + 1
    }

    /// Starts the relay: the bridge connects upstream (bounded by ``abandonedAfter`` until the create is answered).
    func start(_ bridge: WebSocketBridge) {
        self.bridge = bridge
        bridge.attached(self, side: .client)
        armAbandonTimer()
    }

    /// The upstream accepted (the bridge's opening, before any upstream frame): the create is answered, and the client
    /// has ``firstDownstreamWithin`` from now to ask its first downstream — from the answer, which is when the client
    /// can, not from the create's arrival (a slow upstream, or a busy gateway, would eat the client's time).
    func opened(selectedProtocol: String?) {
        guard case .creating(let answer) = state else { return }
        state = .open
        if !downstreamSeen { armAbandonTimer(in: Self.firstDownstreamWithin) }
        answer(.opened(selectedProtocol: selectedProtocol))
    }

    // MARK: Requests

    /// An upstream request's body: its frames go to the bridge. A sequence number out of order (or missing when the
    /// client numbers its requests), a body that is not frames, or a session not open is refused and fails the
    /// session. `bytes`: the body is the frames' bytes as they are (the binary encoding), else text whose code points
    /// are the bytes (``KaazingEmulation/bytes(fromMixedText:)``).
    func upstream(sequence: UInt64?, body: [UInt8], bytes: Bool = false) -> Refusal? {
        guard case .open = state, let bridge else { return Refusal(description: "the WebSocket is not open") }
        guard !sequenced || sequence == nextUpstream else { return fail("an upstream request out of sequence") }
        // Every upstream request carries frames (KAAZING's clients end each with `RECONNECT`).
        guard !body.isEmpty else { return fail("an empty upstream request") }
        nextUpstream += 1
        if !downstreamSeen {
            halfOpenUpstreamBytes += body.count
            guard halfOpenUpstreamBytes <= Self.halfOpenUpstreamLimit else {
                return fail("more than \(Self.halfOpenUpstreamLimit) bytes sent upstream before a downstream was asked")
            }
        }
        let frames: [KaazingEmulation.Frame]
        do {
            let text = bytes ? body : try KaazingEmulation.bytes(fromMixedText: body)
            frames = try KaazingEmulation.frames(in: escaped && !bytes ? KaazingEmulation.unescaped(text) : text, maximumLength: maxMessageSize)
        } catch {
            return fail("an upstream body that is not frames: \(error.description)")
        }
        // A text message must be UTF-8 (RFC 6455 §8.1), as KAAZING Gateway checks it; `PING` and `PONG` only from a
        // client that said it accepts them (`X-Accept-Commands: ping`): else the session fails (`400`).
        for frame in frames {
            switch frame {
            case .text(let bytes) where String(utf8Validating: bytes) == nil: return fail("a text message that is not UTF-8")
            case .ping where !acceptsPings, .pong where !acceptsPings:
                return fail("a PING or PONG from a client that did not accept them")
            default: continue
            }
        }
        for frame in frames {
            guard case .open = state else { break }
            switch frame {
            case .binary(let bytes):
                bridge.received(WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: bytes)), from: .client)
            case .text(let bytes):
                bridge.received(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: bytes)), from: .client)
            case .ping:
                enqueue(.pong)
                flush()
            case .pong, .command(.nop), .command(.reconnect):
                break
            case .command(.close):
                // The client closes (its code is not carried): the upstream is told 1000, and the client's side ends.
                var data = ByteBuffer()
                data.write(webSocketErrorCode: .normalClosure)
                bridge.received(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), from: .client)
            }
        }
        bridge.readComplete(.client)
        return nil
    }

    /// An upstream request's connection ended inside its body: the WebSocket ends (`CLOSE`, `RECONNECT` downstream).
    func upstreamCutShort() {
        _ = fail("an upstream request cut short")
    }

    /// A request to the session's upstream URL that is not one (another method): the WebSocket ends, as KAAZING's
    /// server side ends it.
    func refusedRequest() {
        _ = fail("a request to the upstream URL that is not a POST")
    }

    /// Whether a downstream request may attach (its sequence number the next); a refusal fails the session.
    func downstreamRequested(sequence: UInt64?) -> Refusal? {
        guard case .open = state else { return Refusal(description: "the WebSocket is not open") }
        guard !sequenced || sequence == nextDownstream else { return fail("a downstream request out of sequence") }
        nextDownstream += 1
        if !downstreamSeen {
            downstreamSeen = true
            registry.downstreamAsked(id)
        }
        return nil
    }

    /// The downstream response's head is written on `channel`: the frames go there from now on; the one before ends
    /// with `RECONNECT`. `kilobytes`: the client's `.kb`, the most one response carries.
    func downstreamAttached(_ channel: any Channel, kilobytes: Int?) {
        guard case .open = state else {
            end(channel, closing: true)
            return
        }
        if let previous = downstream { end(previous, closing: false) }
        downstream = channel
        downstreamBytes = 0
        downstreamLimit = min(Self.downstreamBytesLimit, max(64 * 1024, (kilobytes ?? Int.max / 2048) * 1024))
        abandonTimer?.cancel()
        abandonTimer = nil
        if heartbeat == nil { scheduleHeartbeat() }
        if !kept.isEmpty {
            outgoing = kept + outgoing
            kept = []
        }
        flush()
        bridge?.writabilityChanged(.client)
    }

    /// The downstream's socket takes more again: the upstream's frames flow.
    func downstreamDrained() {
        bridge?.writabilityChanged(.client)
    }

    /// A downstream connection closed (the client went, or asked the next one).
    func downstreamDetached(_ channel: any Channel) {
        guard let current = downstream, current === channel else { return }
        downstream = nil
        armAbandonTimer()
    }

    // MARK: Downstream

    private func enqueue(_ frame: KaazingEmulation.Frame) {
        KaazingEmulation.encode(frame, into: &outgoing)
    }

    /// Writes the frames so far to the downstream, or keeps them for the next.
    private func send() {
        guard !outgoing.isEmpty else { return }
        guard let downstream else {
            kept += outgoing
            outgoing = []
            return
        }
        let bytes = outgoing
        outgoing = []
        downstreamBytes += bytes.count
        downstream.writeAndFlush(ByteBuffer(bytes: escaped ? KaazingEmulation.escaped(bytes) : bytes), promise: nil)
        if downstreamBytes >= downstreamLimit {
            // The browser keeps a response's whole text: this one ends, the client asks the next.
            self.downstream = nil
            end(downstream, closing: false)
            armAbandonTimer()
        }
    }

    /// Ends a downstream response: `RECONNECT` (after `CLOSE` when the WebSocket ends), then its connection. (Command
    /// frames hold no byte the escaped encodings escape.)
    private func end(_ channel: any Channel, closing: Bool) {
        var bytes: [UInt8] = []
        if closing { KaazingEmulation.encode(.command(.close), into: &bytes) }
        KaazingEmulation.encode(.command(.reconnect), into: &bytes)
        channel.writeAndFlush(ByteBuffer(bytes: bytes)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// A `NOP` on the downstream every ``heartbeatInterval`` while the session is open.
    private func scheduleHeartbeat() {
        heartbeat = eventLoop.assumeIsolated().scheduleTask(in: Self.heartbeatInterval) {
            guard case .open = self.state else { return }
            if self.downstream != nil {
                self.enqueue(.command(.nop))
                self.flush()
            }
            self.scheduleHeartbeat()
        }
    }

    private func armAbandonTimer(in delay: TimeAmount = EmulatedWebSocket.abandonedAfter) {
        abandonTimer?.cancel()
        abandonTimer = eventLoop.assumeIsolated().scheduleTask(in: delay) {
            self.abandonTimer = nil
            guard self.downstream == nil else { return }
            self.logger.debug("closing an emulated WebSocket whose client asked no downstream", metadata: ["id": .string(self.id)])
            self.finish()
        }
    }

    /// Fails the session for `reason`: the client's requests were not the protocol.
    private func fail(_ reason: String) -> Refusal {
        logger.debug("failing an emulated WebSocket", metadata: ["id": .string(id), "reason": .string(reason)])
        finish()
        return Refusal(description: reason)
    }

    /// The client's side ends: the downstream gets `CLOSE` and `RECONNECT`, the bridge hears the client went.
    private func finish() {
        switch state {
        case .closed:
            return
        case .creating(let answer):
            state = .closed
            answer(.upstreamUnavailable)
        case .open:
            state = .closed
        }
        abandonTimer?.cancel()
        abandonTimer = nil
        heartbeat?.cancel()
        heartbeat = nil
        if let downstream {
            self.downstream = nil
            send(outgoingTo: downstream)
            end(downstream, closing: true)
        }
        kept = []
        outgoing = []
        registry.remove(id)
        let bridge = self.bridge
        self.bridge = nil
        bridge?.closed(.client)
    }

    private func send(outgoingTo channel: any Channel) {
        guard !outgoing.isEmpty else { return }
        channel.write(ByteBuffer(bytes: outgoing), promise: nil)
        outgoing = []
    }

    /// A frame from the upstream, as a WSE frame: messages whole (fragments joined), a ping answered upstream with a
    /// pong (the client answers none: KAAZING's emulation carries no payload), a close ends the client's side.
    private func take(_ frame: WebSocketFrame) {
        switch frame.opcode {
        case .text, .binary:
            let bytes = Array(frame.unmaskedData.readableBytesView)
            if frame.fin {
                enqueue(frame.opcode == .text ? .text(bytes) : .binary(bytes))
            } else {
                fragments = (frame.opcode == .text, bytes)
            }
        case .continuation:
            guard var message = fragments else { return }
            message.bytes += frame.unmaskedData.readableBytesView
            if frame.fin {
                fragments = nil
                enqueue(message.text ? .text(message.bytes) : .binary(message.bytes))
            } else {
                fragments = message
            }
        case .ping:
            let data = frame.unmaskedData
            eventLoop.assumeIsolated().execute {
                guard case .open = self.state else { return }
                self.bridge?.received(WebSocketFrame(fin: true, opcode: .pong, data: data), from: .client)
                self.bridge?.readComplete(.client)
            }
        case .pong:
            // The gateway's keep-alive under `x-kaazing-idle-timeout` (``WebSocketKeepAliveStateMachine``): a frame the
            // client's idle timer sees — a `PONG` to a client that accepts them, else a `NOP`.
            enqueue(acceptsPings ? .pong : .command(.nop))
        case .connectionClose:
            eventLoop.assumeIsolated().execute { self.finish() }
        default:
            break
        }
    }
}

extension EmulatedWebSocket: WebSocketBridgeSide {
    var isWritable: Bool {
        if let downstream { return downstream.isWritable }
        // What waits for a downstream, kept and not yet flushed; before the first, a small allowance only.
        return kept.count + outgoing.count < (downstreamSeen ? maxMessageSize * 2 : Self.halfOpenKeptLimit)
    }

    func writeAsItCame(_ frame: WebSocketFrame, thenClose: Bool) -> Bool { false }

    func write(_ frame: WebSocketFrame) {
        switch state {
        case .creating:
            // Before the upstream accepted, the bridge writes only the close of an upstream that failed.
            if frame.opcode == .connectionClose { eventLoop.assumeIsolated().execute { self.finish() } }
        case .open:
            take(frame)
        case .closed:
            break
        }
    }

    func flush() {
        if case .open = state { send() }
    }

    func close() {
        eventLoop.assumeIsolated().execute { self.finish() }
    }

    func writeAndClose(_ frame: WebSocketFrame) {
        write(frame)
        flush()
        close()
    }

    func pauseReads() {}

    func resumeReads() {}
}
