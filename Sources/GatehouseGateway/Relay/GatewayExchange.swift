import GatehouseHTTP
import HTTPTypes
import NIOCore

// The relay's per-request state, apart from its handler (GatewayHTTPHandler.swift): an exchange, with its
// decisions in GatewayExchangeStateMachine, and where its request goes. The connection's machine holds the exchange
// under way (GatewayConnectionStateMachine's serving state).

/// One request and its answer: what the handler keeps of it (its head, route, upstream connection, metrics and
/// spans), and where it is (``state``: the decisions are the machine's).
final class GatewayExchange {
    let head: ClientRequestHead
    /// When the read that brought the request's head happened (its latency counts from there).
    let start: NIODeadline
    var state: GatewayExchangeStateMachine
    /// The body's bytes received before the upstream connection was ready.
    var waiting: [ByteBuffer] = []
    var service = "none"
    var route: GatewayRoute?
    var fields = HTTPFields()
    /// Whether ``fields`` are still to be made (a request admitted by its connection's memory needs none of them
    /// unless its forwarding fields are made anew).
    var fieldsPending = false
    /// The request's head as written upstream.
    var upstreamHead: ByteBuffer?
    var upstream: UpstreamConnection?
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
    var bodyRead: ((GatewayHTTPHandler, GatewayExchange) -> Void)?
    /// KAAZING's emulated transport: called when the body will not come whole (the connection ended inside it).
    var bodyAbandoned: (() -> Void)?
    /// The body's bytes kept so far, and the most it may have (KAAZING's emulated upstream).
    var keptBytes = 0
    var keptLimit = Int.max

    init(head: ClientRequestHead, keepAlive: Bool, requestEnded: Bool, start: NIODeadline) {
        self.head = head
        self.start = start
        state = GatewayExchangeStateMachine(keepAlive: keepAlive, requestEnded: requestEnded,
                                            retriable: head.isIdempotent && !head.hasBody)
    }
}

/// Where a request goes: its target as sent and parsed, the service it is routed to, the rest of its path below
/// the service's, and the target sent upstream. A class: an exchange and the connection's memory of its last
/// route share it, and a copy is one retain.
final class GatewayRoute {
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
