@testable import GatehouseGateway
import NIOCore
import Testing

/// The client's bytes turned into requests without a socket: whatever way the bytes are cut, the same heads and bodies
/// come out; a pipelined head waits for the exchange before it; bad framing ends the reading. Over real connections:
/// GatewayHTTPTests, GatewayClientBytesTests, the parsers against llhttp (GatewayParserDifferentialTests).
@Suite(.timeLimit(.minutes(1)))
struct GatewayRequestReaderTests {
    /// What a sequence of steps came to: the heads' targets (with whether a body follows) and each request's body.
    struct Read: Equatable {
        var heads: [String] = []
        var bodies: [String] = []
        var incomplete = 0
        var failure: String?
    }

    /// Feeds `bytes` in pieces of `piece` bytes, taking every step after each; an exchange is "under way" from a head
    /// until its body ended when `serial` (a pipelined head then waits until the test ends that exchange).
    static func read(_ text: String, piece: Int, keepsBody: Bool = false, serial: Bool = false) -> Read {
        var reader = GatewayRequestReader()
        var read = Read()
        var current = ""
        var underWay = false
        let bytes = Array(text.utf8)
        var offset = 0
        let allocator = ByteBufferAllocator()
        while offset < bytes.count, read.failure == nil {
            let end = min(offset + piece, bytes.count)
            reader.append(ByteBuffer(bytes: bytes[offset..<end]))
            offset = end
            steps: while true {
                switch reader.next(exchangeUnderWay: serial && underWay, keepsBody: keepsBody, allocator: allocator) {
                case .wait:
                    break steps
                case .headIncomplete:
                    read.incomplete += 1
                    break steps
                case .head(let head, let bodiless):
                    read.heads.append(head.target + (bodiless ? "" : " +body"))
                    if bodiless {
                        read.bodies.append("")
                    } else {
                        underWay = true
                    }
                case .body(var bytes, let ended):
                    current += bytes.readString(length: bytes.readableBytes) ?? ""
                    if ended {
                        read.bodies.append(current)
                        current = ""
                        underWay = false
                    }
                case .malformedHead(let error):
                    read.failure = error.tooLarge ? "too large" : "malformed head"
                case .malformedBody:
                    read.failure = "malformed body"
                }
            }
        }
        return read
    }

    static let pipelined = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
        + "\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
        + "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n"
        + "GET /d HTTP/1.1\r\nHost: x\r\n\r\n"

    @Test(arguments: [1, 2, 3, 7, 16, 64, 4096])
    func everyCutGivesTheSameRequests(piece: Int) {
        let read = Self.read(Self.pipelined, piece: piece)
        #expect(read.failure == nil)
        #expect(read.heads == ["/a", "/b +body", "/c +body", "/d"])
        // The chunked body as it came (forwarded with its framing), the length body's bytes.
        #expect(read.bodies == ["", "hello", "3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n", ""])
    }

    @Test(arguments: [1, 5, 4096])
    func aBodyTheGatewayKeepsComesWithoutItsChunksFraming(piece: Int) {
        let read = Self.read("POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", piece: piece, keepsBody: true)
        #expect(read.bodies == ["abcde"])
    }

    @Test func aPipelinedHeadWaitsForTheExchangeBeforeIt() {
        var reader = GatewayRequestReader()
        reader.append(ByteBuffer(string: "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"))
        let allocator = ByteBufferAllocator()
        guard case .head(let first, true) = reader.next(exchangeUnderWay: false, keepsBody: false, allocator: allocator) else {
            Issue.record("no first head")
            return
        }
        #expect(first.target == "/a")
        guard case .wait = reader.next(exchangeUnderWay: true, keepsBody: false, allocator: allocator) else {
            Issue.record("the pipelined head was read while the exchange before it was under way")
            return
        }
        #expect(reader.hasPending)
        guard case .head(let second, true) = reader.next(exchangeUnderWay: false, keepsBody: false, allocator: allocator) else {
            Issue.record("no second head once the first exchange ended")
            return
        }
        #expect(second.target == "/b")
        #expect(!reader.hasPending)
    }

    @Test func aHeadArrivingInPiecesIsSaidIncompleteUntilWhole() {
        let read = Self.read("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n", piece: 4)
        #expect(read.heads == ["/slow"])
        #expect(read.incomplete == 7)
    }

    @Test func badFramingEndsTheReading() {
        #expect(Self.read("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", piece: 4096).failure == "malformed head")
        #expect(Self.read("NOT HTTP\r\n\r\n", piece: 4096).failure == "malformed head")
        #expect(Self.read("GET /\(String(repeating: "a", count: 70_000)) HTTP/1.1\r\n\r\n", piece: 4096).failure == "too large")
        let chunked = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
        #expect(Self.read(chunked, piece: 4096).failure == "malformed body")
        #expect(Self.read(chunked, piece: 4096).heads == ["/ +body"])
    }

    @Test func afterTheEndNothingIsRead() {
        var reader = GatewayRequestReader()
        reader.append(ByteBuffer(string: "GET /a HTTP/1.1\r\n"))
        reader.end()
        reader.append(ByteBuffer(string: "Host: x\r\n\r\nGET /b HTTP/1.1\r\n\r\n"))
        guard case .wait = reader.next(exchangeUnderWay: false, keepsBody: false, allocator: ByteBufferAllocator()) else {
            Issue.record("a request read after the end")
            return
        }
        #expect(!reader.hasPending)
    }

    @Test func whatCameBehindAnUpgradeIsHandedOn() {
        var reader = GatewayRequestReader()
        reader.append(ByteBuffer(string: "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n\u{81}\u{00}"))
        guard case .head = reader.next(exchangeUnderWay: false, keepsBody: false, allocator: ByteBufferAllocator()) else {
            Issue.record("no head")
            return
        }
        var rest = reader.takePending()
        #expect(rest?.readBytes(length: 2) == [0xC2, 0x81])
        #expect(reader.takePending() == nil)
    }
}
