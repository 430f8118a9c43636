import GatehouseHTTP
import HTTPTypes
import NIOCore

// The relay's per-request state, apart from its handler's state machine (GatewayHTTPHandler.swift): an exchange and
// where its request goes.

extension GatewayHTTPHandler {
    /// One request and its answer.
    final class Exchange {
        enum Phase {
            /// Admission (on a task) is under way; the body waits.
            case deciding
            /// Waiting for an upstream connection; the body waits.
            case connecting
            /// The request is relayed to `upstream`, the answer back.
            case relaying
            /// The gateway has answered (or the answer is complete): the rest of the client's body is dropped.
            case answered
        }

        let head: ClientRequestHead
        /// When the read that brought the request's head happened (its latency counts from there).
        let start: NIODeadline
        var phase = Phase.deciding
        /// Whether the client connection stays open after this exchange.
        var keepAlive: Bool
        /// Whether the request announces a body (`Content-Length` above 0, or `Transfer-Encoding`).
        var hasBody: Bool { head.hasBody }
        var requestEnded = false
        var responseStarted = false
        var responseEnded = false
        /// The body's bytes received before the upstream connection was ready.
        var waiting: [ByteBuffer] = []
        var service = "none"
        var route: Route?
        var fields = HTTPFields()
        /// Whether ``fields`` are still to be made (a request admitted by its connection's memory needs none of them
        /// unless its forwarding fields are made anew).
        var fieldsPending = false
        /// The request's head as written upstream.
        var upstreamHead: ByteBuffer?
        var upstream: UpstreamConnection?
        /// Whether the upstream connection had served an exchange before (a stale one may close under us).
        var reused = false
        var retried = false
        var bodySent = false
        /// Whether the client's body failed (malformed, cut short): `400`, not `502`.
        var bodyFailed = false
        var upstreamReusable = false
        var successChallenge: String?
        var status = 0
        /// Whether the exchange counts in the request metrics (WebSocket upgrades do not).
        var counted = true
        /// KAAZING's emulated transport: answers go in KAAZING's HTTP envelope (``EmulationRequest/wantsEnvelope(_:)``).
        var enveloped = false
        /// Its server span and its upstream exchange's, when the gateway traces (GatewayHTTPHandler+Tracing.swift).
        var span: OTLPSpan?
        var upstreamSpan: OTLPSpan?
        /// KAAZING's emulated transport: called once the request's body is read whole (kept in ``waiting``).
        var bodyRead: ((GatewayHTTPHandler, Exchange) -> Void)?

        init(head: ClientRequestHead, keepAlive: Bool, start: NIODeadline) {
            self.head = head
            self.keepAlive = keepAlive
            self.start = start
        }
    }

    /// Where a request goes: its target as sent and parsed, the service it is routed to, the rest of its path below
    /// the service's, and the target sent upstream. A class: an exchange and the connection's memory of its last
    /// route share it, and a copy is one retain.
    final class Route {
        let text: String
        let target: RequestTarget
        let service: ProtectedService
        let remainder: ProtectedService.Remainder
        let upstreamTarget: String

        init(text: String, target: RequestTarget, service: ProtectedService, remainder: ProtectedService.Remainder) {
            self.text = text
            self.target = target
            self.service = service
            self.remainder = remainder
            upstreamTarget = service.base.target(path: remainder.path, query: Gateway.forwardedQuery(target, service: service))
        }
    }
}
