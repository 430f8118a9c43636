import NIOCore

/// The client's bytes turned into requests, one step at a time: a request head read in place, then its body's pieces
/// (by length, or chunked: as they came, or without the chunks' framing for a body the gateway keeps itself), then the
/// next head — which waits, unread, while an exchange is under way (a pipelined request). No socket and no handler:
/// ``GatewayHTTPHandler`` appends what it reads and runs each step (`GatewayRequestReaderTests` feed it bytes cut
/// anywhere).
///
/// ```
///  head ──whole, with a body──▶ body(remaining:) / chunked ──last byte──▶ head
///    │ incomplete: wait for more        (pieces as they come)
///    │ malformed, too large, or ended ──▶ done (nothing more is read)
/// ```
struct GatewayRequestReader {
    /// What the client's next bytes are.
    enum Position {
        /// A request head (or empty lines before one).
        case head
        /// This many more bytes of the current request's body.
        case body(remaining: Int)
        /// The current request's chunked body.
        case chunked(ChunkedBodyScanner)
        /// Nothing more: the connection ends.
        case done
    }

    /// One step of reading.
    enum Step {
        /// Nothing to do until more bytes come (or, for a pipelined head, until the exchange before it ends).
        case wait
        /// A head began to arrive and is not whole yet.
        case headIncomplete
        /// A request head, read whole (`bodiless`: no body follows it).
        case head(ClientRequestHead, bodiless: Bool)
        /// A piece of the current request's body (`ended`: its last).
        case body(ByteBuffer, ended: Bool)
        /// A head that cannot be read (malformed, or too large): nothing more is read.
        case malformedHead(HTTPHeadError)
        /// A chunked body framed wrongly: nothing more is read.
        case malformedBody
    }

    private(set) var position = Position.head
    /// Bytes read but not yet taken (the rest of a head, a body's next piece, a pipelined request).
    private var inbound: ByteBuffer?

    /// Whether bytes wait to be taken (a pipelined request, or what came behind an upgrade's head).
    var hasPending: Bool { (inbound?.readableBytes ?? 0) > 0 }

    /// Keeps `bytes` behind what is waiting.
    mutating func append(_ bytes: ByteBuffer) {
        guard var buffer = inbound, buffer.readableBytes > 0 else {
            inbound = bytes
            return
        }
        inbound = nil
        var bytes = bytes
        buffer.writeBuffer(&bytes)
        inbound = buffer
    }

    /// What waits to be taken, taken (the bytes behind an upgrade's head, for the handlers that take over).
    mutating func takePending() -> ByteBuffer? {
        defer { inbound = nil }
        return hasPending ? inbound : nil
    }

    /// Nothing more is read: what waits is dropped.
    mutating func end() {
        position = .done
        inbound = nil
    }

    /// The next step. `exchangeUnderWay`: a head waits for the exchange before it to end; `keepsBody`: the current
    /// body is the gateway's own (KAAZING's emulated upstream), given without its chunks' framing.
    mutating func next(exchangeUnderWay: Bool, keepsBody: Bool, allocator: ByteBufferAllocator) -> Step {
        while var buffer = inbound, buffer.readableBytes > 0 {
            inbound = nil
            switch position {
            case .head:
                guard !exchangeUnderWay else {
                    inbound = buffer
                    return .wait
                }
                // Empty lines before a request line are ignored (RFC 9112 §2.2).
                let blank = buffer.withUnsafeReadableBytes { raw in raw.prefix { $0 == 0x0D || $0 == 0x0A }.count }
                buffer.moveReaderIndex(forwardBy: blank)
                guard buffer.readableBytes > 0 else { continue }
                let parsed: HTTPMessageHead?
                do {
                    parsed = try buffer.withUnsafeReadableBytes { raw throws(HTTPHeadError) in try HTTPMessageHead.parse(raw, kind: .request) }
                } catch {
                    end()
                    return .malformedHead(error)
                }
                guard let parsed else {
                    inbound = buffer
                    return .headIncomplete
                }
                let head = buffer.readSlice(length: parsed.length)!
                if buffer.readableBytes > 0 { inbound = buffer }
                switch parsed.framing {
                case .length(let length): position = .body(remaining: length)
                case .chunked: position = .chunked(ChunkedBodyScanner())
                case .none, .untilClose: position = .head
                }
                let bodiless = if case .head = position { true } else { false }
                return .head(ClientRequestHead(bytes: head, head: parsed), bodiless: bodiless)
            case .body(let remaining):
                let count = min(remaining, buffer.readableBytes)
                let body = buffer.readSlice(length: count)!
                if buffer.readableBytes > 0 { inbound = buffer }
                position = count == remaining ? .head : .body(remaining: remaining - count)
                return .body(body, ended: count == remaining)
            case .chunked(var scanner):
                let count: Int
                var data: [Range<Int>] = []
                do {
                    count = try buffer.withUnsafeReadableBytes { raw throws(HTTPHeadError) in
                        keepsBody ? try scanner.scan(raw) { data.append($0) } : try scanner.scan(raw)
                    }
                } catch {
                    end()
                    return .malformedBody
                }
                var body = buffer.readSlice(length: count)!
                if keepsBody {
                    var dechunked = allocator.buffer(capacity: data.reduce(0) { $0 + $1.count })
                    for range in data {
                        var piece = body.getSlice(at: body.readerIndex + range.lowerBound, length: range.count)!
                        dechunked.writeBuffer(&piece)
                    }
                    body = dechunked
                }
                if buffer.readableBytes > 0 { inbound = buffer }
                position = scanner.isComplete ? .head : .chunked(scanner)
                return .body(body, ended: scanner.isComplete)
            case .done:
                return .wait
            }
        }
        return .wait
    }
}
