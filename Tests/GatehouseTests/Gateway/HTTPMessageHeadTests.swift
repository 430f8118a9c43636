import Foundation
@testable import GatehouseGateway
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// The byte-level head parser and chunked-body scanner: examples of what they read and refuse, and — the contract
/// that keeps a relay built on them from request smuggling — a differential test against NIO's decoder (llhttp) on
/// generated request streams: every request they accept, NIO's decoder reads with the same method, target, fields
/// and body, ending at the same byte.
@Suite(.timeLimit(.minutes(3))) struct HTTPMessageHeadTests {
    /// A message read by ``HTTPMessageHead`` and ``ChunkedBodyScanner`` from the start of `bytes`.
    struct Message: Equatable, CustomStringConvertible {
        var method: String
        var target: String
        var fields: [(String, String)]
        var body: [UInt8]

        /// Field values compare without the whitespace around them, which is not part of a value (RFC 9110 §5.5:
        /// NIO's decoder keeps what follows one).
        static func == (a: Message, b: Message) -> Bool {
            func trimmed(_ value: String) -> String { value.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) }
            return a.method == b.method && a.target == b.target && a.body == b.body
                && a.fields.map(\.0) == b.fields.map(\.0) && a.fields.map { trimmed($0.1) } == b.fields.map { trimmed($0.1) }
        }

        var description: String { "\(method) \(target) \(fields) body \(body.count) bytes" }
    }

    enum Outcome: Equatable {
        case message(Message, length: Int, keepsGoing: Bool)
        case incomplete
        case refused(String)
    }

    /// The first request of `bytes` as this parser reads it, and the bytes it takes.
    static func ours(_ bytes: [UInt8]) -> Outcome {
        bytes.withUnsafeBytes { raw -> Outcome in
            do {
                guard let head = try HTTPMessageHead.parse(raw, kind: .request) else { return .incomplete }
                guard case .request(let method, let target) = head.startLine else { return .refused("not a request") }
                func text(_ range: Range<Int>) -> String { String(decoding: raw[range], as: UTF8.self) }
                let fields = head.fields.map { (text($0.name), text($0.value)) }
                var body: [UInt8] = []
                var length = head.length
                switch head.framing {
                case .none:
                    break
                case .length(let count):
                    guard raw.count - length >= count else { return .incomplete }
                    body = Array(raw[length..<(length + count)])
                    length += count
                case .chunked:
                    var scanner = ChunkedBodyScanner()
                    let rest = UnsafeRawBufferPointer(rebasing: raw[length...])
                    let taken = try scanner.scan(rest) { body += rest[$0] }
                    guard scanner.isComplete else { return .incomplete }
                    length += taken
                case .untilClose:
                    return .refused("a request framed until close")
                }
                // After a request that ends its connection or changes protocol, nothing more is read from it.
                let connection = fields.filter { $0.0.lowercased() == "connection" }.map { $0.1.lowercased() }.joined(separator: ",")
                let tokens = connection.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                let upgrade = fields.contains { $0.0.lowercased() == "upgrade" } || text(method) == "CONNECT"
                let keepsGoing = head.minorVersion == 1 ? !tokens.contains("close") && !upgrade : tokens.contains("keep-alive") && !upgrade
                return .message(Message(method: text(method), target: text(target), fields: fields, body: body), length: length, keepsGoing: keepsGoing)
            } catch {
                return .refused("\(error)")
            }
        }
    }

    /// Every request NIO's decoder reads from `bytes` (given at once), up to its first error.
    static func nio(_ bytes: [UInt8]) -> [Message] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        defer { _ = try? channel.finish() }
        _ = try? channel.writeInbound(ByteBuffer(bytes: bytes))
        var messages: [Message] = []
        var current: Message?
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            switch part {
            case .head(let head):
                current = Message(method: head.method.rawValue, target: head.uri, fields: head.headers.map { ($0.name, $0.value) }, body: [])
            case .body(var buffer):
                current?.body += buffer.readBytes(length: buffer.readableBytes) ?? []
            case .end:
                if let current { messages.append(current) }
                current = nil
            }
        }
        return messages
    }

    /// The requests this parser reads from the start of `bytes`, one after the other, while each keeps the
    /// connection going.
    static func oursAll(_ bytes: [UInt8]) -> [Message] {
        var messages: [Message] = []
        var rest = bytes
        while !rest.isEmpty, case .message(let message, let length, let keepsGoing) = ours(rest) {
            messages.append(message)
            rest.removeFirst(length)
            if !keepsGoing { break }
        }
        return messages
    }

    // MARK: Examples

    @Test func aRequestIsReadInPlaceWithItsFraming() throws {
        let text = "POST /echo?x=1 HTTP/1.1\r\nHost: gw\r\nAuthorization:  Basic YTpi \t\r\nContent-Length: 5\r\n\r\nhello"
        guard case .message(let message, let length, true) = Self.ours(Array(text.utf8)) else { Issue.record("not read"); return }
        #expect(message.method == "POST" && message.target == "/echo?x=1")
        #expect(message.fields.map(\.0) == ["Host", "Authorization", "Content-Length"])
        #expect(message.fields[1].1 == "Basic YTpi")
        #expect(message.body == Array("hello".utf8))
        #expect(length == text.utf8.count)
    }

    @Test func aHeadIsIncompleteUntilItsEmptyLineArrives() {
        for text in ["GET / HTTP/1.1", "GET / HTTP/1.1\r\nHost: a\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\r", "GET / HTTP/1.1\r"] {
            #expect(Self.ours(Array(text.utf8)) == .incomplete, "\(text.debugDescription)")
        }
        let body = "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nshort"
        #expect(Self.ours(Array(body.utf8)) == .incomplete)
    }

    @Test func ambiguousHeadsAreRefused() {
        let refused = [
            "GET / HTTP/1.1\nHost: a\r\n\r\n",                                        // bare LF
            "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",                               // bare CR
            "GET / HTTP/1.1\r\nHost : a\r\n\r\n",                                     // whitespace before the colon
            "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",                           // obs-fold
            "GET / HTTP/1.1\r\n: a\r\n\r\n",                                          // empty name
            "GET / HTTP/1.1\r\nX: a\u{01}b\r\n\r\n",                                  // control character
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", // two lengths
            "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\nhello",
            "POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\nhello",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "GET  / HTTP/1.1\r\n\r\n", "GET / HTTP/2.0\r\n\r\n", "GET /a b HTTP/1.1\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n",       // whitespace after a size
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello!\r\n0\r\n\r\n",      // data longer than its size
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX : y\r\n\r\n",            // a malformed trailer
        ]
        for text in refused {
            guard case .refused = Self.ours(Array(text.utf8)) else {
                Issue.record("accepted: \(text.debugDescription)")
                continue
            }
        }
    }

    @Test func oversizedHeadsAreRefusedAsTooLarge() throws {
        let long = "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: HTTPMessageHead.maxLineLength) + "\r\n\r\n"
        let many = "GET / HTTP/1.1\r\n" + String(repeating: "X: a\r\n", count: HTTPMessageHead.defaultMaxFields + 1) + "\r\n"
        let endless = "GET / HTTP/1.1\r\n" + String(repeating: "X-Filler: aaaaaaaaaaaaaaaaaaaaaaaa\r\n", count: 2000)
        for text in [long, many, endless] {
            #expect(throws: HTTPHeadError.self) {
                _ = try Array(text.utf8).withUnsafeBytes { raw throws(HTTPHeadError) in try HTTPMessageHead.parse(raw, kind: .request) }
            }
            do {
                _ = try Array(text.utf8).withUnsafeBytes { raw throws(HTTPHeadError) in try HTTPMessageHead.parse(raw, kind: .request) }
            } catch let error as HTTPHeadError {
                #expect(error.tooLarge)
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func responsesAreFramedByStatusMethodAndFields() throws {
        func framing(_ text: String, toHEAD: Bool = false) throws -> HTTPMessageHead.Framing? {
            try Array(text.utf8).withUnsafeBytes { raw throws(HTTPHeadError) in
                try HTTPMessageHead.parse(raw, kind: .response(toHEAD: toHEAD))?.framing
            }
        }
        #expect(try framing("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n") == .length(12))
        #expect(try framing("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", toHEAD: true) == HTTPMessageHead.Framing.none)
        #expect(try framing("HTTP/1.1 204 No Content\r\nContent-Length: 12\r\n\r\n") == HTTPMessageHead.Framing.none)
        #expect(try framing("HTTP/1.1 304 Not Modified\r\n\r\n") == HTTPMessageHead.Framing.none)
        #expect(try framing("HTTP/1.1 100 Continue\r\n\r\n") == HTTPMessageHead.Framing.none)
        #expect(try framing("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n") == .chunked)
        #expect(try framing("HTTP/1.0 200 OK\r\n\r\n") == .untilClose)
        #expect(try framing("HTTP/1.1 200\r\n\r\n") == .untilClose)
        #expect(try framing("HTTP/1.1 200 OK\r\nContent-Length: 1") == nil)
        for refused in ["HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 200OK\r\n\r\n", "HTTP/2 200 OK\r\n\r\n",
                        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"] {
            #expect(throws: HTTPHeadError.self, "\(refused.debugDescription)") { _ = try framing(refused) }
        }
    }

    @Test func aChunkedBodyIsFollowedHoweverItsBytesAreCut() throws {
        let body = Array("5;name=value\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nExpires: never\r\n\r\nGET /next".utf8)
        let end = body.count - "GET /next".utf8.count
        for cut in 0...body.count {
            var scanner = ChunkedBodyScanner()
            var data: [UInt8] = []
            var taken = 0
            for piece in [Array(body[..<cut]), Array(body[cut...])] where !scanner.isComplete {
                taken += try piece.withUnsafeBytes { raw throws(HTTPHeadError) in try scanner.scan(raw) { data += raw[$0] } }
            }
            #expect(scanner.isComplete && taken == end, "cut at \(cut)")
            #expect(data == Array("helloabcdefghijklmnopqrstuvwxyz".utf8), "cut at \(cut)")
        }
    }

    // MARK: Against NIO's decoder

    /// Generated request streams — valid requests, requests with one ambiguity or another, bodies of every framing,
    /// two requests back to back, and random bytes flipped — read by both: whatever this parser reads, NIO's decoder
    /// reads the same, request by request (it may refuse more, never less).
    /// How many streams (`GATEHOUSE_HEAD_FUZZ_COUNT`) from which seed (`GATEHOUSE_HEAD_FUZZ_SEED`): a longer run
    /// with other seeds looks further.
    static let streams = ProcessInfo.processInfo.environment["GATEHOUSE_HEAD_FUZZ_COUNT"].flatMap(Int.init) ?? 20000
    static let seed = ProcessInfo.processInfo.environment["GATEHOUSE_HEAD_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x6874_7470_6865_6164

    @Test(.timeLimit(.minutes(3))) func everyRequestItReadsNIOsDecoderReadsAlike() {
        var generator = RequestStreamGenerator(seed: Self.seed)
        var accepted = 0
        for index in 0..<Self.streams {
            let bytes = generator.next()
            let mine = Self.oursAll(bytes)
            accepted += mine.count
            guard !mine.isEmpty else { continue }
            let theirs = Self.nio(bytes)
            guard theirs.count >= mine.count, Array(theirs.prefix(mine.count)) == mine else {
                Issue.record("stream \(index) of seed \(Self.seed) read differently: ours \(mine), NIO's \(theirs); bytes \(String(decoding: bytes, as: UTF8.self).debugDescription)")
                return
            }
        }
        // The streams must exercise acceptance, not only refusals.
        #expect(accepted > Self.streams / 4, "only \(accepted) requests accepted")
    }
}

extension HTTPMessageHeadTests {
    /// The first answer of `bytes` to a request that was (`toHEAD`) or was not a `HEAD`, as this parser reads it:
    /// status, fields, body (its chunks' data), and the bytes it takes; `nil` when refused or incomplete, or framed by
    /// the connection's end (both read those to the end).
    static func oursAnswer(_ bytes: [UInt8], toHEAD: Bool) -> (status: Int, fields: [(String, String)], body: [UInt8], length: Int)? {
        bytes.withUnsafeBytes { raw -> (Int, [(String, String)], [UInt8], Int)? in
            guard let head = try? HTTPMessageHead.parse(raw, kind: .response(toHEAD: toHEAD)), case .response(let status) = head.startLine
            else { return nil }
            let fields = head.fields.map { (String(decoding: raw[$0.name], as: UTF8.self), String(decoding: raw[$0.value], as: UTF8.self)) }
            var length = head.length
            var body: [UInt8] = []
            switch head.framing {
            case .none:
                break
            case .length(let count):
                guard raw.count - length >= count else { return nil }
                body = Array(raw[length..<(length + count)])
                length += count
            case .chunked:
                var scanner = ChunkedBodyScanner()
                let rest = UnsafeRawBufferPointer(rebasing: raw[length...])
                guard let taken = try? scanner.scan(rest, data: { body += rest[$0] }), scanner.isComplete else { return nil }
                length += taken
            case .untilClose:
                return nil
            }
            return (status, fields, body, length)
        }
    }

    /// The answers NIO's response decoder reads from `bytes` after a request of `method`.
    static func nioAnswers(_ bytes: [UInt8], method: HTTPMethod) -> [(status: Int, fields: [(String, String)], body: [UInt8])] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes)))
        defer { _ = try? channel.finish() }
        // The decoder learns each request's method from the requests it sees written: this one, then a GET for the
        // marker answer after it.
        for method in [method, .GET] {
            _ = try? channel.writeOutbound(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: method, uri: "/")))
            _ = try? channel.writeOutbound(HTTPClientRequestPart.end(nil))
        }
        _ = try? channel.writeInbound(ByteBuffer(bytes: bytes))
        var answers: [(Int, [(String, String)], [UInt8])] = []
        var current: (Int, [(String, String)], [UInt8])?
        while let part = try? channel.readInbound(as: HTTPClientResponsePart.self) {
            switch part {
            case .head(let head): current = (Int(head.status.code), head.headers.map { ($0.name, $0.value) }, [])
            case .body(var buffer): current?.2 += buffer.readBytes(length: buffer.readableBytes) ?? []
            case .end:
                if let current { answers.append(current) }
                current = nil
            }
        }
        return answers
    }

    /// Generated answers (statuses with and without bodies, every framing, ambiguities and flipped bytes) to `GET`
    /// and `HEAD` requests, read by both: every final answer this parser reads, NIO's response decoder reads alike —
    /// same status, fields and body, ending at the same byte (shown by an answer appended after it, read alike too).
    @Test func everyAnswerItReadsNIOsResponseDecoderReadsAlike() {
        var generator = AnswerGenerator(seed: Self.seed)
        var accepted = 0
        for index in 0..<(Self.streams / 2) {
            let toHEAD = index % 4 == 0
            let bytes = generator.next()
            // A final answer (1xx ones are left to the relay, which drops them) and a marker answer after it.
            guard let mine = Self.oursAnswer(bytes, toHEAD: toHEAD), mine.status >= 200 else { continue }
            let marker = Array("HTTP/1.1 299 Marker\r\nContent-Length: 1\r\n\r\nM".utf8)
            let stream = Array(bytes[..<mine.length]) + marker
            accepted += 1
            let theirs = Self.nioAnswers(stream, method: toHEAD ? .HEAD : .GET)
            func trimmed(_ fields: [(String, String)]) -> [String] {
                fields.map { $0.0 + ":" + $0.1.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) }
            }
            guard let first = theirs.first, first.status == mine.status, trimmed(first.fields) == trimmed(mine.fields), first.body == mine.body
            else {
                Issue.record("answer \(index) (seed \(Self.seed), HEAD \(toHEAD)) read differently: ours \(mine), NIO's \(theirs); bytes \(String(decoding: bytes, as: UTF8.self).debugDescription)")
                return
            }
            // After an answer that ends its connection nothing more is read from it (by the relay either).
            let keepsAlive = bytes.withUnsafeBytes { raw in
                (try? HTTPMessageHead.parse(raw, kind: .response(toHEAD: toHEAD))).flatMap { $0 }.map {
                    UpstreamRequestHead.keepsAlive($0, tokens: UpstreamRequestHead.connectionTokens($0, bytes: ByteBuffer(bytes: bytes)))
                } ?? false
            }
            if keepsAlive, theirs.count < 2 || theirs[1].status != 299 {
                Issue.record("answer \(index) (seed \(Self.seed)) ended elsewhere for NIO's decoder: \(theirs); bytes \(String(decoding: bytes, as: UTF8.self).debugDescription)")
                return
            }
        }
        #expect(accepted > Self.streams / 10, "only \(accepted) answers accepted")
    }
}

/// Answers for the differential test: statuses with and without bodies, every framing, with some chance of an
/// ambiguity, and sometimes random bytes changed.
struct AnswerGenerator {
    private var inner: RequestStreamGenerator

    init(seed: UInt64) { inner = RequestStreamGenerator(seed: seed ^ 0x5EED) }

    mutating func next() -> [UInt8] { inner.answer() }
}

/// Request streams for the differential test: mostly well-formed requests with varied fields and bodies, each with
/// some chance of an ambiguity (a bare LF, a folded line, a space before a colon, lengths and encodings in
/// conflict), sometimes two back to back, sometimes with random bytes changed.
struct RequestStreamGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    private mutating func random() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private mutating func chance(_ percent: UInt64) -> Bool { random() % 100 < percent }

    /// One upstream answer (see ``AnswerGenerator``).
    mutating func answer() -> [UInt8] {
        let status = chance(85) ? pick(["200 OK", "201 Created", "404 Not Found", "500 Oops", "204 No Content", "304 Not Modified"])
            : pick(["100 Continue", "200", "200 ", "20 OK", "2000 OK", "200 Ok\u{01}"])
        let version = chance(90) ? "HTTP/1.1" : pick(["HTTP/1.0", "HTTP/2", "http/1.1"])
        var head = "\(version) \(status)\r\n"
        for _ in 0..<(random() % 3) {
            head += "\(pick(["Content-Type", "X-A", "Set-Cookie", "Connection", "X B", ""])):\(pick([" a", " b ", "\tc", ""]))\r\n"
        }
        var body = ""
        switch random() % 3 {
        case 0:
            let content = String(repeating: "z", count: Int(random() % 12))
            head += "Content-Length: \(chance(92) ? "\(content.utf8.count)" : pick(["+1", "1,1", "", "1 ", "01"]))\r\n"
            if chance(4) { head += "Content-Length: \(content.utf8.count)\r\n" }
            body = content
        case 1:
            head += "Transfer-Encoding: \(chance(90) ? "chunked" : pick(["gzip, chunked", "identity", "chunked "]))\r\n"
            if chance(4) { head += "Content-Length: 2\r\n" }
            body = chunkedBody(eol: "\r\n")
        default:
            head += "Content-Length: 0\r\n"
        }
        var bytes = Array((head + "\r\n" + body).utf8)
        if chance(10), !bytes.isEmpty {
            let position = Int(random() % UInt64(bytes.count))
            bytes[position] = pick([0x0D, 0x0A, 0x20, 0x3A, 0x00, UInt8(ascii: "9")])
        }
        return bytes
    }
    private mutating func pick<T>(_ items: [T]) -> T { items[Int(random() % UInt64(items.count))] }

    mutating func next() -> [UInt8] {
        var bytes = request()
        if chance(40) { bytes += request() }
        if chance(15) {
            for _ in 0..<(1 + random() % 3) where !bytes.isEmpty {
                let position = Int(random() % UInt64(bytes.count))
                switch random() % 3 {
                case 0: bytes[position] = pick([0x0D, 0x0A, 0x20, 0x09, 0x3A, 0x00, 0x7F, 0xC3, 0x2C, UInt8(ascii: "0")])
                case 1: bytes.insert(pick([0x0D, 0x0A, 0x20, 0x3A, UInt8(ascii: "5")]), at: position)
                default: bytes.remove(at: position)
                }
            }
        }
        return bytes
    }

    private mutating func request() -> [UInt8] {
        let eol = chance(3) ? "\n" : "\r\n"
        let method = chance(90) ? pick(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]) : pick(["FOO", "get", "G-T", ""])
        let target = chance(95) ? pick(["/", "/echo", "/echo/a?b=c", "/a%20b", "/ü", "/a/../b"]) : pick(["", "/a b", "*", "http://x/"])
        let version = chance(92) ? "HTTP/1.1" : pick(["HTTP/1.0", "HTTP/2.0", "http/1.1", "HTTP/1.1 "])
        var head = "\(method) \(target) \(version)\(eol)"
        head += "Host: gateway\(eol)"
        for _ in 0..<(random() % 4) {
            let name = chance(95) ? pick(["X-Test", "Accept", "Cookie", "authorization", "Via", "X-Forwarded-For"]) : pick(["X Test", "X@", "", "X-Test "])
            let value = chance(90) ? pick(["a", " spaced  ", "\tb", "é", "1, 2", ""]) : pick(["a\u{01}", "a\u{7F}", "a\rb"])
            head += "\(name):\(chance(80) ? " " : "")\(value)\(eol)"
            if chance(3) { head += " folded\(eol)" }
        }
        var body = ""
        switch random() % 5 {
        case 0, 1:
            break
        case 2:
            let content = String(repeating: "x", count: Int(random() % 20))
            let length = chance(90) ? "\(content.utf8.count)" : pick(["+1", "1,1", " 1", "", "-1", "0x1", "99999999999999999999", "00\(content.utf8.count)", "1\t"])
            head += "Content-Length: \(length)\(eol)"
            if chance(5) { head += "Content-Length: \(length)\(eol)" }
            body = content
        case 3:
            let encoding = chance(85) ? pick(["chunked", "Chunked", "CHUNKED"])
                : pick(["gzip, chunked", "chunked, gzip", "identity", "chunked ,", "xchunked", "chunked\t", "\u{0B}chunked", "chunked\u{00}"])
            head += "\(chance(97) ? "Transfer-Encoding" : pick(["Transfer-Encoding ", "Transfer_Encoding", "Transfer-Encoding\t"])):\(chance(90) ? " " : "\t")\(encoding)\(eol)"
            if chance(5) { head += "Content-Length: 3\(eol)" }
            body = chunkedBody(eol: eol)
        default:
            head += "Connection: \(pick(["close", "keep-alive", "upgrade", "Keep-Alive, x"]))\(eol)"
            if chance(30) { head += "Upgrade: websocket\(eol)" }
        }
        return Array((head + eol + body).utf8)
    }

    private mutating func chunkedBody(eol: String) -> String {
        var body = ""
        for _ in 0..<(random() % 3) {
            let data = String(repeating: "y", count: Int(1 + random() % 30))
            let size = chance(92) ? String(data.utf8.count, radix: 16, uppercase: chance(50))
                : pick(["", "g", " 1", "1 ", "-1", "0x1", "000\(String(data.utf8.count, radix: 16))", "FFFFFFFFFFFFFFFFF", "1\t"])
            let ext = chance(10) ? pick([";a=b", ";a", "; a=\"b\"", ";a=\"b;c\"", ";a=\"b\\\"c\"", ";a=\"b\r\n", ";=b", ";a;b=c"]) : ""
            body += "\(size)\(ext)\r\n\(data)\r\n"
        }
        body += "0\r\n"
        if chance(15) { body += pick(["Expires: never\r\n", "X : y\r\n", "X: y\r\n z\r\n"]) }
        return body + "\r\n"
    }
}
