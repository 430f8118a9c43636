import Foundation
import GatehouseHTTP
@testable import GatehouseGateway
import NIOCore
import NIOEmbedded
import Testing

/// The gateway's connection handler on an `EmbeddedChannel`: bytes in, bytes out, time advanced by hand — what it
/// answers itself, its timers and graceful shutdown, without a socket. The relay to upstreams, admission on a task and
/// WebSocket bridges need real connections: the suites over the real gateway (GatewayHTTPTests, GatewayTimeoutTests,
/// GatewayWebSocketTests and the rest).
@Suite(.timeLimit(.minutes(1)))
struct GatewayHTTPHandlerTests {
    /// A connection to a gateway with one open service (its upstream is never reached here).
    static func connection() throws -> EmbeddedChannel {
        let gateway = Gateway(services: [try ProtectedService(name: "open", path: "/open", upstream: URL(string: "http://127.0.0.1:9")!, realm: nil)],
                              headerReadTimeout: .seconds(10), idleTimeout: .seconds(60))
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(GatewayHTTPHandler(gateway: gateway))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 4000)).wait()
        return channel
    }

    /// What the handler wrote so far, as text.
    static func written(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    static func send(_ channel: EmbeddedChannel, _ text: String) throws {
        try channel.writeInbound(ByteBuffer(string: text))
    }

    @Test func theProbesAreAnsweredAndTheConnectionKept() throws {
        let channel = try Self.connection()
        try Self.send(channel, "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /ready HTTP/1.1\r\nHost: x\r\n\r\n")
        let answers = try Self.written(channel)
        #expect(answers.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(answers.contains(#"{"status":"ok"}"#))
        #expect(answers.contains(#"{"status":"ready"}"#))
        #expect(!answers.lowercased().contains("connection: close"))
        #expect(channel.isActive)
        _ = try channel.finish()
    }

    @Test func aTargetNoServiceHoldsIs404AndATracingMethod405() throws {
        let channel = try Self.connection()
        try Self.send(channel, "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try Self.written(channel).hasPrefix("HTTP/1.1 404 "))
        try Self.send(channel, "TRACE /open/x HTTP/1.1\r\nHost: x\r\n\r\n")
        let refused = try Self.written(channel)
        #expect(refused.hasPrefix("HTTP/1.1 405 "))
        #expect(refused.contains("Allow: GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS"))
        _ = try channel.finish()
    }

    @Test func aMalformedRequestIs400AndTheConnectionEnds() throws {
        let channel = try Self.connection()
        try Self.send(channel, "GARBAGE\r\n\r\n")
        let answer = try Self.written(channel)
        #expect(answer.hasPrefix("HTTP/1.1 400 "))
        #expect(answer.contains("Connection: close"))
        // What the client still sends is read and dropped for a moment (lingering), then the connection closes.
        try Self.send(channel, "more")
        #expect(try Self.written(channel).isEmpty)
        channel.embeddedEventLoop.advanceTime(by: LingeringClose.linger)
        #expect(!channel.isActive)
    }

    @Test func theFirstHeadMustArriveWithinTheHeadTimeoutOfTheOpening() throws {
        let channel = try Self.connection()
        try Self.send(channel, "GET /hea")
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        try Self.send(channel, "l")  // a byte now and then does not reset it
        #expect(try Self.written(channel).isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(try Self.written(channel).hasPrefix("HTTP/1.1 408 "))
        channel.embeddedEventLoop.advanceTime(by: LingeringClose.linger)
        #expect(!channel.isActive)
    }

    @Test func anIdleConnectionIsClosedAfterTheIdleTimeout() throws {
        let channel = try Self.connection()
        try Self.send(channel, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try Self.written(channel).hasPrefix("HTTP/1.1 200 "))
        channel.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    @Test func gracefulShutdownClosesAnIdleConnection() throws {
        let channel = try Self.connection()
        try Self.send(channel, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try Self.written(channel)
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(!channel.isActive)
    }

    @Test func aWebSocketVersionItDoesNotSpeakIs426AndTheConnectionEnds() throws {
        let channel = try Self.connection()
        try Self.send(channel, "GET /open/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      + "Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
        let answer = try Self.written(channel)
        #expect(answer.hasPrefix("HTTP/1.1 426 "))
        #expect(answer.contains("Sec-WebSocket-Version: 13"))
        #expect(answer.contains("Connection: close"))
        #expect(!channel.isActive)
    }
}
