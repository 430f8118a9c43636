import Foundation
import GatehouseProtocol
import NIOCore

/// A request of KAAZING's emulated WebSocket (``KaazingEmulation``) for a WebSocket service: its path below the
/// service is `;e/<create>`, `;e/ub/<id>` or `;e/db/<id>`.
enum EmulationRequest {
    /// `GET|POST <path>/;e/ctm?…`: a new emulated WebSocket.
    case create(Create)
    /// `POST <path>/;e/ub/<id>…`: the client's frames.
    case upstream(id: String, sequence: UInt64)
    /// `GET <path>/;e/db/<id>?.ksn=…`: the next downstream response.
    case downstream(id: String, sequence: UInt64, kilobytes: Int?)

    struct Create {
        let sequence: UInt64
        /// The application's protocols (`X-WebSocket-Protocol`), asked of the upstream.
        let protocols: [String]
        let acceptsPings: Bool
        /// The path the client used, up to `/;e/` (the upstream and downstream URLs start with it).
        let path: Substring
        /// The WebSocket's path below the service (the create's, up to `;e`).
        let remainder: ProtectedService.Remainder
    }

    /// Why an emulation request is refused: `400` (or `405`), with this description.
    struct Refusal: Error {
        let status: Int
        let description: String
    }

    /// The query parameters of KAAZING's clients, never sent upstream.
    static let clientParameters: Set<String> = [".kn", ".knp", ".kl", ".kac", ".kct", ".krn", ".ksn", ".kid", ".kb", ".kc", ".kp", ".kkt", ".ki"]

    /// The request `head` at `remainder` below a WebSocket service, or `nil` when it is none of emulation's.
    init?(head: ClientRequestHead, remainder: ProtectedService.Remainder) throws(Refusal) {
        guard let marker = remainder.segments.lastIndex(of: KaazingEmulation.marker) else { return nil }
        let segments = Array(remainder.segments[marker...])
        guard segments.count >= 2 else { return nil }
        let text = head.target
        let path = text[..<(text.firstIndex(of: "?") ?? text.endIndex)]
        let query = text.firstIndex(of: "?").map { text[text.index(after: $0)...] } ?? ""
        let headerSequence = head.first("x-sequence-no").map { Substring($0) }
        if segments.count == 2, KaazingEmulation.createSegments.contains(segments[1]) {
            guard head.method == .get || head.methodName == "POST" else { throw Refusal(status: 405, description: "a create is a GET or a POST") }
            guard head.first("x-websocket-version") == KaazingEmulation.version else {
                throw Refusal(status: 400, description: "X-WebSocket-Version must be \(KaazingEmulation.version)")
            }
            guard let sequence = (headerSequence ?? KaazingEmulation.parameter(".ksn", in: query)).flatMap(KaazingEmulation.sequenceNumber) else {
                throw Refusal(status: 400, description: "X-Sequence-No is missing or not a sequence number")
            }
            guard let suffix = path.range(of: "/" + KaazingEmulation.marker + "/", options: .backwards) else { return nil }
            let protocols = head.values("x-websocket-protocol").flatMap(KaazingHandshake.protocols(in:))
            let commands = head.values("x-accept-commands").flatMap(KaazingHandshake.protocols(in:))
            self = .create(Create(sequence: sequence, protocols: protocols, acceptsPings: commands.contains("ping"), path: path[..<suffix.lowerBound],
                                  remainder: ProtectedService.Remainder(segments: Array(remainder.segments[..<marker]), trailingSlash: false)))
            return
        }
        guard segments.count == 3 else { return nil }
        // The upstream URL's last segment carries the client's `&.krn=<random>` (it appends it without a `?`).
        let id = String(segments[2].prefix { $0 != "&" })
        guard id.count == 32, id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            throw Refusal(status: 404, description: "no emulated WebSocket at this path")
        }
        switch segments[1] {
        case KaazingEmulation.upstreamSegment:
            guard head.methodName == "POST" else { throw Refusal(status: 405, description: "an upstream request is a POST") }
            guard let sequence = (headerSequence ?? KaazingEmulation.parameter(".ksn", in: query)).flatMap(KaazingEmulation.sequenceNumber) else {
                throw Refusal(status: 400, description: "X-Sequence-No is missing or not a sequence number")
            }
            self = .upstream(id: id, sequence: sequence)
        case KaazingEmulation.downstreamSegment:
            guard head.method == .get || head.methodName == "POST" else { throw Refusal(status: 405, description: "a downstream request is a GET") }
            guard let sequence = (KaazingEmulation.parameter(".ksn", in: query) ?? headerSequence).flatMap(KaazingEmulation.sequenceNumber) else {
                throw Refusal(status: 400, description: ".ksn is missing or not a sequence number")
            }
            let kilobytes = KaazingEmulation.parameter(".kb", in: query).flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
            self = .downstream(id: id, sequence: sequence, kilobytes: kilobytes)
        default:
            return nil
        }
    }

    /// Whether the client asked for answers in KAAZING's envelope (`X-Next-Protocol` or `.knp`: `httpxe/1.1`).
    static func wantsEnvelope(_ head: ClientRequestHead) -> Bool {
        if head.first("x-next-protocol") == KaazingEmulation.envelopeProtocol { return true }
        let text = head.target
        guard let question = text.firstIndex(of: "?") else { return false }
        return KaazingEmulation.parameter(".knp", in: text[text.index(after: question)...]) == KaazingEmulation.envelopeProtocol[...]
    }

    /// The page's origin: the bridge's `X-Origin` (only a script of the gateway's own origin can send it: a custom
    /// field on another origin's request would need a CORS preflight the gateway never grants), else `Origin`.
    static func origin(_ head: ClientRequestHead) -> String? {
        head.first("x-origin") ?? head.first("origin")
    }
}

extension GatewayAnswer {
    /// This answer in KAAZING's HTTP envelope (``KaazingEmulation/envelope(status:reason:fields:body:)``): a `200`
    /// whose body is the answer; a `404` or a `5xx` stays as it is (a browser shows those).
    var enveloped: GatewayAnswer {
        let code = status.code
        guard code != 404, code < 500 else { return self }
        let fields = headers.map { (name: $0.name.rawName, value: $0.value) }
        let bytes = KaazingEmulation.envelope(status: code, reason: status.reasonPhrase, fields: fields, body: Array(body.readableBytesView))
        return GatewayAnswer(status: .ok, headers: [.contentType: KaazingEmulation.envelopeContentType, .cacheControl: "no-store"],
                             body: ByteBuffer(bytes: bytes))
    }
}
