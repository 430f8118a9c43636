import GatehouseHTTP
import NIOCore

/// The gateway's own answers and the end of an exchange: an answer written (and the exchange counted, its upstream
/// connection kept, pooled or closed), the next exchange started, an exchange abandoned when its client went away.
extension GatewayHTTPHandler {
    /// The gateway's own answer to `exchange`.
    func answer(_ exchange: GatewayExchange, _ answer: GatewayAnswer) {
        guard let context, exchange.state.answering() else { return }
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            upstream.close()
        }
        exchange.status = answer.status.code
        let bytes = answer.bytes(minorVersion: exchange.head.minorVersion, close: machine.closesAfter(keepAlive: exchange.state.keepAlive),
                                 withBody: exchange.head.method != .head, allocator: allocator)
        responseDone(exchange, written: context.writeAndFlush(wrapOutboundOut(bytes)))
    }

    /// The answer's last part is written (`written`: when it is, needed only when the connection closes after it).
    func responseDone(_ exchange: GatewayExchange, written: EventLoopFuture<Void>?) {
        let dropRest = exchange.state.answerEnded()
        // The idle time between requests counts from the end of the answer.
        let closes = machine.answerEnded(keepAlive: exchange.state.keepAlive, now: now)
        if dropRest {
            // The client is still sending: its upstream connection cannot be reused; the rest is read and dropped.
            if let upstream = exchange.upstream {
                exchange.upstream = nil
                upstream.close()
            }
        }
        if closes {
            machine.exchangeEnded()
            finish(exchange)
            _ = machine.close()
            let drain = dropRest
            // `self`, not a weak reference: a weak reference would move every later retain and release of the
            // handler (several per request) onto the runtime's slow path; the write's future always completes.
            let end = {
                guard let context = self.context else { return }
                if drain {
                    LingeringClose.answerAndClose(context, nil)
                } else {
                    context.close(promise: nil)
                }
            }
            if let written { written.assumeIsolated().whenComplete { _ in end() } } else { end() }
            return
        }
        finishIfDone(exchange)
        resumeReadsIfPossible()
    }

    /// Ends the exchange once both its messages are complete, and starts the next.
    func finishIfDone(_ exchange: GatewayExchange) {
        guard exchange.state.isComplete, self.exchange === exchange else { return }
        machine.exchangeEnded()
        finish(exchange)
        startNext()
    }

    /// Counts the exchange and gives its upstream connection back (or closes it).
    func finish(_ exchange: GatewayExchange) {
        if exchange.counted { count(exchange) }
        endSpans(exchange)
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            if exchange.state.keepsUpstream {
                keep(upstream)
            } else {
                upstream.close()
            }
        }
    }

    /// Counts `exchange` in the request metrics, with the counter and timer of the connection's last exchange when they
    /// are its service's and status's.
    func count(_ exchange: GatewayExchange) {
        let metrics: KeyedMetricHandles<GatewayStatistics.RequestKey>.Handles
        if let last = lastMetrics, last.status == exchange.status, last.service == exchange.service {
            metrics = last.handles
        } else {
            metrics = gateway.statistics.requestMetrics(service: exchange.service, status: exchange.status)
            lastMetrics = (exchange.service, exchange.status, metrics)
        }
        metrics.counter.increment()
        // Until the end of its answer (``responseDone(_:written:)`` tells the machine then), or now when it failed.
        let end = exchange.state.responseEnded ? machine.lastActivity : now
        metrics.timer.recordNanoseconds(max(0, (end - exchange.start).nanoseconds))
    }

    /// Keeps the upstream connection of an exchange that ended cleanly for the connection's next request (most go
    /// to the same upstream: no pool lookup, no hashing of its key), the one kept before going back to the pool.
    func keep(_ upstream: UpstreamConnection) {
        upstream.handler.exchange = nil
        upstream.handler.resumeReads()
        if let previous = keptUpstream { pool?.release(previous) }
        keptUpstream = upstream
    }

    /// Gives the kept upstream connection back to the pool (the client's connection ends, or leaves the relay).
    func releaseKeptUpstream() {
        guard let kept = keptUpstream else { return }
        keptUpstream = nil
        pool?.release(kept)
    }

    /// Drops an exchange whose client went away.
    func abandon(_ exchange: GatewayExchange) {
        machine.exchangeEnded()
        bodyCutShort(exchange)
        endSpans(exchange)
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            upstream.close()
        }
    }
}
