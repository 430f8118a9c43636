import Foundation
import GatehouseProtocol
import NIOCore

/// A request of KAAZING's emulated WebSocket (``KaazingEmulation``) for a WebSocket service: its path below the
/// service is `;e/<create>`, `;e/<upstream>/<id>` or `;e/<downstream>/<id>` (``KaazingEmulation/upstreamSegments``,
/// ``KaazingEmulation/downstreamSegments``).
enum EmulationRequest {
    /// `GET|POST <path>/;e/ctm?…`: a new emulated WebSocket.
    case create(Create)
    /// `POST <path>/;e/ub/<id>…`: the client's frames. `sequence`: `nil` when the client sends none (older clients;
    /// KAAZING Gateway checks them only with its `wse.specification` switch on, off by default).
    case upstream(id: String, sequence: UInt64?)
    /// `GET <path>/;e/db/<id>?.ksn=…`: the next downstream response.
    case downstream(id: String, sequence: UInt64?, kilobytes: Int?)

    struct Create {
        /// `nil`: the client sends no sequence numbers, and none of the session's requests is checked for them.
        let sequence: UInt64?
        /// The create's last segment (`cb`, `ctm`, …): the encoding, which names the session's URLs.
        let segment: String
        /// The binary encoding (`cb`, `cbm`): ``KaazingEmulation/binaryCreateSegments``.
        let binary: Bool
        /// An escaped text encoding (`cte`, `ctem`): ``KaazingEmulation/escapedCreateSegments``.
        let escaped: Bool
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
        /// The session whose URL the refused request named, when its refusal ends it.
        var session: String? = nil
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
        // A sequence number as sent: absent is accepted (`nil`), malformed is not.
        func sequenceOf(_ text: Substring?, missing: String) throws(Refusal) -> UInt64? {
            guard let text else { return nil }
            guard let value = KaazingEmulation.sequenceNumber(text) else { throw Refusal(status: 400, description: missing) }
            return value
        }
        if segments.count == 2, KaazingEmulation.upstreamSegments.contains(segments[1]) || KaazingEmulation.downstreamSegments.contains(segments[1]) {
            // An upstream or downstream URL without its session: none (KAAZING answers 404 too), never relayed.
            throw Refusal(status: 404, description: "no emulated WebSocket at this path")
        }
        if segments.count == 2, KaazingEmulation.createSegments.contains(segments[1]) {
            guard head.method == .get || head.methodName == "POST" else { throw Refusal(status: 405, description: "a create is a GET or a POST") }
            guard head.first("x-websocket-version") == KaazingEmulation.version else {
                throw Refusal(status: 400, description: "X-WebSocket-Version must be \(KaazingEmulation.version)")
            }
            let sequence = try sequenceOf(headerSequence ?? KaazingEmulation.parameter(".ksn", in: query),
                                        missing: "X-Sequence-No is not a sequence number")
            guard let suffix = path.range(of: "/" + KaazingEmulation.marker + "/", options: .backwards) else { return nil }
            let protocols = head.values("x-websocket-protocol").flatMap(KaazingHandshake.protocols(in:))
            let commands = head.values("x-accept-commands").flatMap(KaazingHandshake.protocols(in:))
            // The specification knows one command a client may accept; another is a client this gateway does not know.
            guard commands.allSatisfy({ $0 == KaazingEmulation.acceptedCommand }) else {
                throw Refusal(status: 400, description: "X-Accept-Commands names a command other than ping")
            }
            self = .create(Create(sequence: sequence, segment: segments[1], binary: KaazingEmulation.binaryCreateSegments.contains(segments[1]),
                                  escaped: KaazingEmulation.escapedCreateSegments.contains(segments[1]), protocols: protocols,
                                  acceptsPings: commands.contains(KaazingEmulation.acceptedCommand), path: path[..<suffix.lowerBound],
                                  remainder: ProtectedService.Remainder(segments: Array(remainder.segments[..<marker]), trailingSlash: false)))
            return
        }
        guard segments.count == 3 else { return nil }
        // The upstream URL's last segment carries the client's `&.krn=<random>` (it appends it without a `?`).
        let id = String(segments[2].prefix { $0 != "&" })
        guard id.count == 32, id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            throw Refusal(status: 404, description: "no emulated WebSocket at this path")
        }
        // The session's own encoding decides how its bodies are read, whichever pair of segments names it.
        switch segments[1] {
        case let segment where KaazingEmulation.upstreamSegments.contains(segment):
            guard head.methodName == "POST" else { throw Refusal(status: 405, description: "an upstream request is a POST", session: id) }
            self = .upstream(id: id, sequence: try sequenceOf(headerSequence ?? KaazingEmulation.parameter(".ksn", in: query),
                                                            missing: "X-Sequence-No is not a sequence number"))
        case let segment where KaazingEmulation.downstreamSegments.contains(segment):
            guard head.method == .get || head.methodName == "POST" else { throw Refusal(status: 405, description: "a downstream request is a GET") }
            let sequence = try sequenceOf(KaazingEmulation.parameter(".ksn", in: query) ?? headerSequence, missing: ".ksn is not a sequence number")
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
