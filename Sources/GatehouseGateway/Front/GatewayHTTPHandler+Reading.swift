import GatehouseHTTP
import NIOCore

/// Reading what the client sends: request heads, each starting an exchange once the one before it has ended, the
/// current request's body (forwarded, held, or kept whole for the gateway itself), and what cannot be read.
extension GatewayHTTPHandler {
    /// Reads what the client sent (``GatewayRequestReader``): request heads, each starting an exchange once the one
    /// before it has ended, and the current request's body.
    func process() {
        guard machine.processingStarts() else { return }
        defer { machine.processingEnded() }
        while !closing, !removed {
            // A body the gateway keeps itself (KAAZING's emulated upstream) is taken without its chunks' framing.
            switch reader.next(exchangeUnderWay: exchange != nil, keepsBody: exchange?.bodyRead != nil, allocator: allocator) {
            case .wait:
                return
            case .headIncomplete:
                headArriving()
                return
            case .head(let head, let bodiless):
                begin(head, bodiless: bodiless)
            case .body(let bytes, let ended):
                if let exchange { take(bytes, ended: ended, into: exchange) }
            case .malformedHead(let error):
                refuse(error)
                return
            case .malformedBody:
                bodyFailed()
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
        reader.end()
        _ = machine.close()
        idleTimer?.cancel()
        idleTimer = nil
        LingeringClose.answerAndClose(context, wrapOutboundOut(refusal.bytes(minorVersion: 1, close: true, withBody: true,
                                                                           allocator: allocator)))
    }

    /// The client framed its body wrongly: its fault, `400`, and the connection ends.
    func bodyFailed() {
        reader.end()
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
    func bodyCutShort(_ exchange: GatewayExchange) {
        guard exchange.bodyRead != nil else { return }
        exchange.bodyRead = nil
        let abandoned = exchange.bodyAbandoned
        exchange.bodyAbandoned = nil
        abandoned?()
    }

    /// A piece of the current request's body (`ended`: its last).
    func take(_ bytes: ByteBuffer, ended: Bool, into exchange: GatewayExchange) {
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

    func forward(_ bytes: ByteBuffer, ended: Bool, of exchange: GatewayExchange, to upstream: UpstreamConnection) {
        if bytes.readableBytes > 0 {
            upstream.write(bytes)
            machine.wrote(toClient: false)
        }
        if ended {
            upstream.flush()
            _ = machine.flushDue(toClient: false)
        }
    }
}
