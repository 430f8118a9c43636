import NIOCore

/// The last handler of an upstream connection's pipeline (after TLS, if any): reads the answers in the bytes as they
/// come — each head in place (``HTTPMessageHead``), its body by its framing (``ChunkedBodyScanner`` for chunks) —
/// and hands them to the connection's current exchange, with no HTTP codec objects; writes the request's bytes the
/// exchange makes. Holds the socket's reads while the client cannot take more (backpressure), so that a large answer
/// streams at the client's pace without piling up in memory.
///
/// Informational answers (`1xx`) are dropped. An answer that cannot be read closes the connection (the exchange
/// learns it from the close); bytes after an answer's end make it unusable for another exchange (no next request's
/// answer may come from them), and then close it.
///
/// Heads up to ``maxHeadLength`` bytes (no line longer, at most ``maxFields`` fields): more than a client's, as an
/// upstream's answers may carry large cookies and policies.
final class UpstreamResponseHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How the rest of the current answer's body is read.
    private enum Body {
        case length(Int)
        case chunked(ChunkedBodyScanner)
        case untilClose
    }

    /// Where the connection goes.
    let key: UpstreamKey
    /// The exchange served now; `nil` while idle in the pool.
    var exchange: (any UpstreamExchange)? {
        didSet {
            // A new exchange: the upstream's silence counts from its request, not from the connection's idle time.
            if exchange != nil {
                readSinceCheck = true
                silentChecks = 0
            }
        }
    }
    /// Called once when the connection closes (the pool forgets it), with this handler.
    var onClose: ((UpstreamResponseHandler) -> Void)?
    static let maxHeadLength = 64 * 1024
    static let maxFields = 512

    /// Whether the request now answered was a `HEAD` (its answer has no body): set with each request.
    var requestWasHEAD = false
    /// Whether the body of a chunked answer goes to the exchange as its chunks' data only (for an HTTP/1.0 client).
    var dechunk = false
    private var context: ChannelHandlerContext?
    private var reads = ReadGate()
    /// Bytes of a head not complete yet.
    private var pendingHead: ByteBuffer?
    /// The body being read, if any.
    private var body: Body?
    /// Bytes came after an answer's end: the connection is closing, nothing more of it is read.
    private var unusable = false
    /// The read timeout, checked every quarter of it: a read marks the connection alive, and four checks in a row
    /// without one close it (an upstream silent mid-answer, or an idle connection nobody closed) — a flag per read,
    /// where an `IdleStateHandler` in front cost a clock reading and a pass through it for every read and write.
    private let readTimeout: TimeAmount
    private var readSinceCheck = true
    private var silentChecks = 0
    /// The read timeout closed the connection (the upstream was silent past it).
    private var timedOut = false
    private var timeoutCheck: Scheduled<Void>?
    /// Whether the connection is open, and whether its socket takes more now (kept from the channel's events: read
    /// for every request, and `channel.isActive` costs a retain and a release).
    private(set) var isActive = false
    private(set) var isWritable = true

    init(key: UpstreamKey, readTimeout: TimeAmount) {
        self.key = key
        self.readTimeout = readTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        isActive = context.channel.isActive
        if isActive { scheduleTimeoutCheck(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timeoutCheck?.cancel()
        timeoutCheck = nil
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        isActive = true
        scheduleTimeoutCheck(context)
        context.fireChannelActive()
    }

    /// Holds the handler until it runs or is cancelled (no weak reference: see ``UpstreamConnectionPool/release(_:)``).
    private func scheduleTimeoutCheck(_ context: ChannelHandlerContext) {
        guard timeoutCheck == nil else { return }
        timeoutCheck = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(readTimeout.nanoseconds / 4)) {
            self.timeoutCheck = nil
            guard let context = self.context else { return }
            if self.readSinceCheck {
                self.readSinceCheck = false
                self.silentChecks = 0
            } else {
                self.silentChecks += 1
                if self.silentChecks >= 4 {
                    // Only an exchange times out; an idle connection closed here (its close may take a moment
                    // over TLS) is a connection that closed, for an exchange that takes it meanwhile.
                    self.timedOut = self.exchange != nil
                    context.close(promise: nil)
                    return
                }
            }
            self.scheduleTimeoutCheck(context)
        }
    }

    func write(_ bytes: ByteBuffer) {
        guard let context else { return }
        context.write(wrapOutboundOut(bytes), promise: nil)
    }

    func flush() { context?.flush() }

    /// Stops reading the upstream's socket until ``resumeReads()``.
    func pauseReads() { reads.pause() }

    func resumeReads() { reads.resume(context) }

    func read(context: ChannelHandlerContext) { reads.read(context) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readSinceCheck = true
        var bytes = unwrapInboundIn(data)
        if var pendingHead {
            self.pendingHead = nil
            pendingHead.writeBuffer(&bytes)
            bytes = pendingHead
        }
        while bytes.readableBytes > 0, !unusable {
            guard let exchange else {
                // An idle connection that speaks, or bytes after an answer's end: nothing to relay them to, and the
                // connection's state is unknown.
                context.close(promise: nil)
                return
            }
            if body != nil {
                readBody(&bytes, for: exchange, context: context)
                continue
            }
            let head: HTTPMessageHead?
            do {
                head = try bytes.withUnsafeReadableBytes { raw throws(HTTPHeadError) in
                    try HTTPMessageHead.parse(raw, kind: .response(toHEAD: requestWasHEAD), maxLength: Self.maxHeadLength,
                                              maxLineLength: Self.maxHeadLength, maxFields: Self.maxFields)
                }
            } catch {
                context.close(promise: nil)
                return
            }
            guard let head else {
                pendingHead = bytes
                return
            }
            let headBytes = bytes.readSlice(length: head.length)!
            guard case .response(let status) = head.startLine, status >= 200 else { continue }
            switch head.framing {
            case .none:
                exchange.upstreamHead(head, bytes: headBytes)
                ended(context, followedBy: bytes.readableBytes)
            case .length(let length):
                body = .length(length)
                exchange.upstreamHead(head, bytes: headBytes)
            case .chunked:
                body = .chunked(ChunkedBodyScanner())
                exchange.upstreamHead(head, bytes: headBytes)
            case .untilClose:
                body = .untilClose
                exchange.upstreamHead(head, bytes: headBytes)
            }
        }
    }

    /// Hands the body's bytes among `bytes` to `exchange`, and ends the answer when its body is complete.
    private func readBody(_ bytes: inout ByteBuffer, for exchange: any UpstreamExchange, context: ChannelHandlerContext) {
        switch body {
        case .length(let left):
            let count = min(left, bytes.readableBytes)
            exchange.upstreamBody(bytes.readSlice(length: count)!)
            if count == left {
                ended(context, followedBy: bytes.readableBytes)
            } else {
                body = .length(left - count)
            }
        case .chunked(var scanner):
            body = nil
            var data: [Range<Int>] = []
            let taken: Int
            do {
                let dechunk = self.dechunk
                taken = try bytes.withUnsafeReadableBytes { raw throws(HTTPHeadError) in
                    try scanner.scan(raw) { if dechunk { data.append($0) } }
                }
            } catch {
                context.close(promise: nil)
                bytes.clear()
                return
            }
            let framed = bytes.readSlice(length: taken)!
            if dechunk {
                for range in data { exchange.upstreamBody(framed.getSlice(at: framed.readerIndex + range.lowerBound, length: range.count)!) }
            } else {
                exchange.upstreamBody(framed)
            }
            if scanner.isComplete {
                ended(context, followedBy: bytes.readableBytes)
            } else {
                body = .chunked(scanner)
            }
        case .untilClose:
            exchange.upstreamBody(bytes)
            bytes.clear()
        case nil:
            break
        }
    }

    /// The answer is complete. Only a new request may bring another one: when `followedBy` bytes came after it
    /// already, the connection is not reused (they must not answer the next request) and is closed.
    private func ended(_ context: ChannelHandlerContext, followedBy: Int) {
        body = nil
        if followedBy > 0 { unusable = true }
        exchange?.upstreamEnd(reusable: followedBy == 0)
        if followedBy > 0 { context.close(promise: nil) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        exchange?.upstreamReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        isWritable = context.channel.isWritable
        exchange?.upstreamWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        isActive = false
        timeoutCheck?.cancel()
        timeoutCheck = nil
        if case .untilClose = body {
            // The close ends an answer framed by it.
            body = nil
            exchange?.upstreamEnd(reusable: false)
        }
        let exchange = self.exchange
        self.exchange = nil
        exchange?.upstreamFailed(timedOut: timedOut)
        let onClose = self.onClose
        self.onClose = nil
        onClose?(self)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A TLS or parse failure: the connection is unusable; the exchange learns it from the close.
        context.close(promise: nil)
    }
}
