import GatehouseHTTP
import NIOCore

/// Reading what the client sends: request heads, each starting an exchange once the one before it has ended, the
/// current request's body (forwarded, held, or kept whole for the gateway itself), and what cannot be read.
extension GatewayHTTPHandler {
    /// Reads what the client sent: request heads, each starting an exchange once the one before it has ended, and
    /// the current request's body.
    func process() {
        guard !processing else { return }
        processing = true
        defer { processing = false }
        while !closing, !removed, var buffer = inbound, buffer.readableBytes > 0 {
            inbound = nil
            switch reading {
            case .head:
                guard exchange == nil else {
                    // A pipelined request: it waits, unread, for the answer before it.
                    inbound = buffer
                    return
                }
                // Empty lines before a request line are ignored (RFC 9112 §2.2).
                let blank = buffer.withUnsafeReadableBytes { raw in raw.prefix { $0 == 0x0D || $0 == 0x0A }.count }
                buffer.moveReaderIndex(forwardBy: blank)
                guard buffer.readableBytes > 0 else { continue }
                let parsed: HTTPMessageHead?
                do {
                    parsed = try buffer.withUnsafeReadableBytes { raw throws(HTTPHeadError) in try HTTPMessageHead.parse(raw, kind: .request) }
                } catch {
                    refuse(error)
                    return
                }
                guard let parsed else {
                    inbound = buffer
                    headArriving()
                    return
                }
                let head = buffer.readSlice(length: parsed.length)!
                if buffer.readableBytes > 0 { inbound = buffer }
                switch parsed.framing {
                case .length(let length): reading = .body(remaining: length)
                case .chunked: reading = .chunked(ChunkedBodyScanner())
                case .none, .untilClose: reading = .head
                }
                begin(ClientRequestHead(bytes: head, head: parsed))
            case .body(let remaining):
                let count = min(remaining, buffer.readableBytes)
                let body = buffer.readSlice(length: count)!
                if buffer.readableBytes > 0 { inbound = buffer }
                reading = count == remaining ? .head : .body(remaining: remaining - count)
                if let exchange { take(body, ended: count == remaining, into: exchange) }
            case .chunked(var scanner):
                let count: Int
                // A body the gateway keeps itself (KAAZING's emulated upstream) is taken without its chunks' framing.
                let dechunk = exchange?.bodyRead != nil
                var data: [Range<Int>] = []
                do {
                    count = try buffer.withUnsafeReadableBytes { raw throws(HTTPHeadError) in
                        dechunk ? try scanner.scan(raw) { data.append($0) } : try scanner.scan(raw)
                    }
                } catch {
                    bodyFailed()
                    return
                }
                var body = buffer.readSlice(length: count)!
                if dechunk {
                    var dechunked = allocator.buffer(capacity: data.reduce(0) { $0 + $1.count })
                    for range in data {
                        var piece = body.getSlice(at: body.readerIndex + range.lowerBound, length: range.count)!
                        dechunked.writeBuffer(&piece)
                    }
                    body = dechunked
                }
                if buffer.readableBytes > 0 { inbound = buffer }
                reading = scanner.isComplete ? .head : .chunked(scanner)
                if let exchange { take(body, ended: scanner.isComplete, into: exchange) }
            case .done:
                return
            }
        }
    }

    /// A request the gateway cannot read: `400` (`431` for a head over ``RequestHeadLimits``), and the connection ends.
    func refuse(_ error: HTTPHeadError) {
        guard let context else { return }
        gateway.logger.debug("refused a request", metadata: ["reason": .string(error.description)])
        let refusal = error.tooLarge
            ? GatewayAnswer.invalidRequest("the request head is larger than the gateway accepts", status: 431)
            : GatewayAnswer.invalidRequest("the request is not a valid HTTP/1.1 request")
        // Counted as a request no service matched: an operator sees malformed and oversized heads in the scrape.
        gateway.statistics.request(service: "none", status: error.tooLarge ? 431 : 400, duration: .nanoseconds((now - machine.lastActivity).nanoseconds))
        reading = .done
        inbound = nil
        _ = machine.close()
        idleTimer?.cancel()
        idleTimer = nil
        LingeringClose.answerAndClose(context, wrapOutboundOut(refusal.bytes(minorVersion: 1, close: true, withBody: true,
                                                                           allocator: allocator)))
    }

    /// The client framed its body wrongly: its fault, `400`, and the connection ends.
    func bodyFailed() {
        reading = .done
        inbound = nil
        guard let exchange else {
            close()
            return
        }
        bodyCutShort(exchange)
        let decision = exchange.state.bodyMalformed()
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            upstream.close()
        }
        switch decision {
        case .close: close()
        case .answer: answer(exchange, GatewayAnswer.invalidRequest("the request body is malformed or incomplete"))
        }
    }

    /// The body the gateway was keeping for itself will not come whole: whoever waited for it is told.
    func bodyCutShort(_ exchange: Exchange) {
        guard exchange.bodyRead != nil else { return }
        exchange.bodyRead = nil
        let abandoned = exchange.bodyAbandoned
        exchange.bodyAbandoned = nil
        abandoned?()
    }

    /// A piece of the current request's body (`ended`: its last).
    func take(_ bytes: ByteBuffer, ended: Bool, into exchange: Exchange) {
        if let bodyRead = exchange.bodyRead {
            exchange.state.bodyKept(ended: ended)
            // An emulated WebSocket's upstream body: kept whole (bounded when it began, or as its chunks come), then
            // handed over.
            exchange.keptBytes += bytes.readableBytes
            guard exchange.keptBytes <= exchange.keptLimit else {
                exchange.bodyRead = nil
                exchange.waiting = []
                exchange.state.lastExchange()
                answer(exchange, GatewayAnswer.invalidRequest("an upstream body of more than \(exchange.keptLimit) bytes", status: 413))
                return
            }
            if bytes.readableBytes > 0 { exchange.waiting.append(bytes) }
            if ended {
                exchange.bodyRead = nil
                exchange.bodyAbandoned = nil
                bodyRead(self, exchange)
            }
            return
        }
        switch exchange.state.bodyRead(ended: ended) {
        case .forward:
            if let upstream = exchange.upstream { forward(bytes, ended: ended, of: exchange, to: upstream) }
        case .hold:
            if bytes.readableBytes > 0 { exchange.waiting.append(bytes) }
        case .drop:
            break
        }
        if exchange.state.requestEnded { finishIfDone(exchange) }
    }

    func forward(_ bytes: ByteBuffer, ended: Bool, of exchange: Exchange, to upstream: UpstreamConnection) {
        if bytes.readableBytes > 0 {
            upstream.write(bytes)
            upstreamFlushPending = true
        }
        if ended {
            upstream.flush()
            upstreamFlushPending = false
        }
    }
}
