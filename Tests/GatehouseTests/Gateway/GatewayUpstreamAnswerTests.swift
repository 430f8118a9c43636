import Foundation
@testable import GatehouseGateway
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// The upstream's answers as the gateway reads them in bytes (``UpstreamResponseHandler``) and writes them to the
/// client (``UpstreamRequestHead/response``), against an upstream that answers exactly the bytes a test gives it:
/// chunked answers relayed as they came (to an HTTP/1.0 client without their chunks, then closed), answers ended by
/// the upstream's close, `HEAD`, `1xx`, `204`, hop-by-hop fields and those `Connection` names left out, and an answer
/// that cannot be read, or bytes after an answer's end, costing the upstream connection, never the client's answer.
@Suite(.timeLimit(.minutes(3))) struct GatewayUpstreamAnswerTests {
    /// An upstream answering each request with the answer its path's last segment names (``answers``), then closing
    /// when the answer says so. Counts the connections it accepted.
    final class ScriptedUpstream: Sendable {
        struct Answer: Sendable {
            var bytes: String
            var close = false
        }

        static let answers: [String: Answer] = [
            "length": Answer(bytes: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Case: Kept\r\n\r\nhello"),
            "chunked": Answer(bytes: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"),
            "close-delimited": Answer(bytes: "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", close: true),
            "head": Answer(bytes: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"),
            "continue": Answer(bytes: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"),
            "no-content": Answer(bytes: "HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n"),
            "hop-by-hop": Answer(bytes: "HTTP/1.1 200 OK\r\nConnection: x-private, keep-alive\r\nX-Private: secret\r\nKeep-Alive: timeout=5\r\n"
                                 + "Proxy-Authenticate: Basic\r\nUpgrade: h2c\r\nTrailer: X-T\r\nX-Kept: yes\r\nContent-Length: 2\r\n\r\nok"),
            "two-lengths": Answer(bytes: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!"),
            "bare-lf": Answer(bytes: "HTTP/1.1 200 OK\nContent-Length: 2\n\nok"),
            "extra-bytes": Answer(bytes: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nsmugg"),
            "upstream-close": Answer(bytes: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", close: true),
            "silent": Answer(bytes: ""),
            // Read, then the connection closed without an answer (a kept connection the upstream dropped).
            "drop": Answer(bytes: "", close: true),
            "stalls": Answer(bytes: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf"),
            "large-head": Answer(bytes: "HTTP/1.1 200 OK\r\nSet-Cookie: big=" + String(repeating: "c", count: 20_000) + "\r\n"
                                 + String(repeating: "X-Many: m\r\n", count: 200) + "Content-Length: 2\r\n\r\nok"),
        ]

        private let channel: any Channel
        private let accepts: Accepts

        private init(channel: any Channel, accepts: Accepts) {
            self.channel = channel
            self.accepts = accepts
        }

        /// The targets of the requests it read, in order.
        var targets: [String] { accepts.targets }
        /// Forgets the targets read so far.
        func forget() { accepts.forget() }

        var port: Int { channel.localAddress?.port ?? 0 }
        /// Connections accepted so far.
        var accepted: Int { accepts.count }

        static func start() async throws -> ScriptedUpstream {
            let accepts = Accepts()
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    accepts.add()
                    return channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Script(accepts: accepts)) }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            return ScriptedUpstream(channel: channel, accepts: accepts)
        }

        func stop() async { try? await channel.close() }

        final class Accepts: Sendable {
            private let value = Atomic<Int>(0)
            private let seen = Mutex<[String]>([])
            func add() { value.add(1, ordering: .relaxed) }
            var count: Int { value.load(ordering: .relaxed) }
            func saw(_ target: String) { seen.withLock { $0.append(target) } }
            var targets: [String] { seen.withLock { $0 } }
            func forget() { seen.withLock { $0.removeAll() } }
        }

        /// Reads requests (a body by its `Content-Length`, as a server does) and writes the answers they name.
        final class Script: ChannelInboundHandler {
            typealias InboundIn = ByteBuffer
            typealias OutboundOut = ByteBuffer
            private let accepts: Accepts
            private var received: [UInt8] = []

            init(accepts: Accepts) { self.accepts = accepts }

            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                received += unwrapInboundIn(data).readableBytesView
                while let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
                    let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                    let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    guard received.count >= end.upperBound + length else { return }
                    received.removeFirst(end.upperBound + length)
                    let target = head.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
                    accepts.saw(target)
                    let name = target.split(separator: "/").last.map(String.init) ?? ""
                    let answer = ScriptedUpstream.answers[name] ?? Answer(bytes: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer.bytes)), promise: nil)
                    if answer.close {
                        context.close(promise: nil)
                        return
                    }
                }
            }
        }
    }

    /// The gateway in front of a ``ScriptedUpstream`` at `/s`, no realm.
    static func withGateway(upstreamReadTimeout: Double? = nil, _ body: (_ port: Int, _ upstream: ScriptedUpstream) async throws -> Void)
        async throws {
        let upstream = try await ScriptedUpstream.start()
        let configuration = GatewayConfiguration(
            host: "127.0.0.1", port: 0, realms: [],
            services: [ServiceConfiguration(name: "scripted", path: "/s", upstream: "http://127.0.0.1:\(upstream.port)/s")],
            upstreamReadTimeout: upstreamReadTimeout)
        let gateway = try Gateway(configuration: configuration, logger: GatewayFixture.logger)
        let app = try await RunningApp.start(logger: GatewayFixture.logger) { onRunning in try gateway.makeServer(onServerRunning: onRunning) }
        do {
            try await body(app.port, upstream)
        } catch {
            await app.stop()
            await upstream.stop()
            throw error
        }
        await app.stop()
        await upstream.stop()
    }

    /// Sends `requests` on a new connection and reads until the gateway closes it (or 10 s pass).
    static func readToEnd(port: Int, after requests: String) async throws -> (bytes: [UInt8], closed: Bool) {
        let connection = try RawHTTPConnection(port: port, timeout: .seconds(10))
        await connection.send(requests)
        return await connection.readToEnd()
    }

    static func head(_ bytes: [UInt8]) -> String {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: bytes[..<end.upperBound], as: UTF8.self)
    }

    @Test(.timeLimit(.minutes(3))) func onlyAnIdempotentRequestIsSentAgainWhenAKeptConnectionDrops() async throws {
        try await Self.withGateway { port, upstream in
            for (method, times) in [("GET", 2), ("DELETE", 2), ("POST", 1)] {
                let client = try RawHTTPConnection(port: port, timeout: .seconds(10))
                // A first exchange keeps the upstream connection; the next one finds it dropped.
                _ = await client.send("GET /s/length HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(await client.readResponse()?.status == 200)
                _ = await client.send("\(method) /s/drop HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(await client.readResponse()?.status == 502, "\(method)")
                // A POST the upstream may have taken before closing is never sent twice (RFC 9110 §9.2.2).
                #expect(upstream.targets.filter { $0 == "/s/drop" }.count == times, "\(method): \(upstream.targets)")
                upstream.forget()
            }
        }
    }

    @Test func aChunkedAnswerGoesOnAsItCameAndTheConnectionStaysUsable() async throws {
        try await Self.withGateway { port, _ in
            let connection = try RawHTTPConnection(port: port, timeout: .seconds(10))
            await connection.send("GET /s/chunked HTTP/1.1\r\nHost: gw\r\n\r\n")
            // The chunked answer as the upstream wrote it, read up to its end; then the next answer on the same connection.
            await connection.send("GET /s/length HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n")
            let (bytes, closed) = await connection.readToEnd()
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(closed)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(text.contains("\r\nTransfer-Encoding: chunked\r\n"))
            #expect(text.contains("\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nX-Trailer: t\r\n\r\nHTTP/1.1 200 OK\r\n"), "\(text)")
            #expect(text.hasSuffix("\r\n\r\nhello"))
            #expect(text.contains("X-Case: Kept"))
        }
    }

    @Test func anHTTP10ClientGetsAChunkedAnswerWithoutItsChunksThenTheClose() async throws {
        try await Self.withGateway { port, _ in
            let (bytes, closed) = try await Self.readToEnd(port: port, after: "GET /s/chunked HTTP/1.0\r\nHost: gw\r\nConnection: keep-alive\r\n\r\n")
            let head = Self.head(bytes)
            #expect(closed)
            #expect(head.hasPrefix("HTTP/1.0 200 OK\r\n"))
            #expect(!head.lowercased().contains("transfer-encoding"))
            #expect(head.contains("Connection: close"))
            #expect(Array(bytes.dropFirst(head.utf8.count)) == Array("hello world".utf8))
        }
    }

    @Test func anAnswerEndedByTheUpstreamsCloseEndsTheClientsConnection() async throws {
        try await Self.withGateway { port, _ in
            let (bytes, closed) = try await Self.readToEnd(port: port, after: "GET /s/close-delimited HTTP/1.1\r\nHost: gw\r\n\r\n")
            let head = Self.head(bytes)
            #expect(closed)
            #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n") && head.contains("Connection: close"))
            #expect(Array(bytes.dropFirst(head.utf8.count)) == Array("until the end".utf8))
        }
    }

    @Test func aHEADAnswerHasItsLengthButNoBody() async throws {
        try await Self.withGateway { port, _ in
            let (bytes, _) = try await Self.readToEnd(port: port, after: "HEAD /s/head HTTP/1.1\r\nHost: gw\r\n\r\nGET /s/length HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n")
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n"), "\(text)")
            // The next answer follows the first one's head at once: no body came between.
            #expect(text.contains("\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n"), "\(text)")
            #expect(text.hasSuffix("hello"))
        }
    }

    @Test func informationalAnswersAreDroppedAndNoContentHasNoBody() async throws {
        try await Self.withGateway { port, _ in
            let (bytes, _) = try await Self.readToEnd(port: port, after: "GET /s/continue HTTP/1.1\r\nHost: gw\r\n\r\nGET /s/no-content HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n")
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 201 Created\r\n"), "\(text)")
            #expect(!text.contains("100 Continue") && !text.contains("103"))
            #expect(text.contains("\r\n\r\nokHTTP/1.1 204 No Content\r\n"), "\(text)")
            #expect(text.hasSuffix("\r\n\r\n"))
        }
    }

    @Test func hopByHopFieldsAndThoseConnectionNamesStayBehind() async throws {
        try await Self.withGateway { port, _ in
            let response = try await RawHTTPConnection.exchange(port: port, target: "/s/hop-by-hop")
            #expect(response.status == 200 && response.text == "ok")
            let names = response.headers.map { $0.name.lowercased() }
            for name in ["x-private", "keep-alive", "proxy-authenticate", "upgrade", "trailer"] { #expect(!names.contains(name), "\(name)") }
            #expect(response.header("X-Kept") == "yes")
            #expect(response.header("Connection") == "close")
        }
    }

    @Test func anAnswerThatCannotBeReadIsA502AndCostsOnlyItsConnection() async throws {
        try await Self.withGateway { port, _ in
            for name in ["two-lengths", "bare-lf"] {
                let response = try await RawHTTPConnection.exchange(port: port, target: "/s/\(name)")
                #expect(response.status == 502, "\(name)")
            }
            let fine = try await RawHTTPConnection.exchange(port: port, target: "/s/length")
            #expect(fine.status == 200 && fine.text == "hello")
        }
    }

    @Test func bytesAfterAnAnswersEndCloseTheUpstreamConnectionNotTheClients() async throws {
        try await Self.withGateway { port, upstream in
            let connection = try RawHTTPConnection(port: port, timeout: .seconds(10))
            await connection.send("GET /s/extra-bytes HTTP/1.1\r\nHost: gw\r\n\r\n")
            let first = await connection.readResponse()
            #expect(first?.status == 200 && first?.text == "ok")
            // The smuggled answer never reaches the client: its next request is answered by the upstream afresh.
            await connection.send("GET /s/length HTTP/1.1\r\nHost: gw\r\n\r\n")
            let second = await connection.readResponse()
            #expect(second?.status == 200 && second?.text == "hello")
            #expect(upstream.accepted == 2)
        }
    }

    /// `Connection` may name hop-by-hop fields to drop, but never the body's length: without it the upstream would
    /// read the body as a request of its own, one the gateway never admitted.
    @Test func aConnectionFieldNamingContentLengthCannotSmuggleTheBody() async throws {
        try await Self.withGateway { port, upstream in
            let smuggled = "GET /s/smuggled HTTP/1.1\r\nHost: gw\r\n\r\n"
            let connection = try RawHTTPConnection(port: port, timeout: .seconds(10))
            await connection.send("POST /s/length HTTP/1.1\r\nHost: gw\r\nConnection: Content-Length, keep-alive\r\n"
                                  + "Content-Length: \(smuggled.utf8.count)\r\n\r\n\(smuggled)")
            let response = await connection.readResponse()
            #expect(response?.status == 200 && response?.text == "hello")
            #expect(upstream.targets == ["/s/length"])
        }
    }

    /// A client's pipelined request starts as soon as the answer before it ends, while the bytes the upstream sent
    /// after that answer are still being read: they must not become the next request's answer.
    @Test func bytesAfterAnAnswersEndNeverAnswerAPipelinedRequest() async throws {
        try await Self.withGateway { port, upstream in
            let connection = try RawHTTPConnection(port: port, timeout: .seconds(10))
            await connection.send("GET /s/extra-bytes HTTP/1.1\r\nHost: gw\r\n\r\nGET /s/length HTTP/1.1\r\nHost: gw\r\n\r\n")
            let first = await connection.readResponse()
            let second = await connection.readResponse()
            #expect(first?.status == 200 && first?.text == "ok")
            #expect(second?.status == 200 && second?.text == "hello", "\(String(describing: second?.text))")
            #expect(upstream.targets == ["/s/extra-bytes", "/s/length"])
        }
    }

    /// An upstream's head may be larger than a client's: a 20 KB cookie and 200 more fields go through.
    @Test func anUpstreamsLargeHeadIsRelayed() async throws {
        try await Self.withGateway { port, _ in
            let response = try await RawHTTPConnection.exchange(port: port, target: "/s/large-head")
            #expect(response.status == 200 && response.text == "ok")
            #expect(response.header("Set-Cookie")?.count == 20_004)
            #expect(response.headers.filter { $0.name == "X-Many" }.count == 200)
        }
    }

    @Test func anUpstreamThatClosesAfterItsAnswerIsNotReused() async throws {
        try await Self.withGateway { port, upstream in
            let connection = try RawHTTPConnection(port: port, timeout: .seconds(10))
            for _ in 0..<3 {
                await connection.send("GET /s/upstream-close HTTP/1.1\r\nHost: gw\r\n\r\n")
                let response = await connection.readResponse()
                #expect(response?.status == 200 && response?.text == "ok")
                #expect(response?.header("Connection") == nil)
            }
            #expect(upstream.accepted == 3)
        }
    }
}
