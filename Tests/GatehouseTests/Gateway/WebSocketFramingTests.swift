import Foundation
@testable import GatehouseGateway
import HummingbirdWSClient
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

/// The bridge relays a frame as it came (`WebSocketSideHandler.asItCame`), past NIO's encoder: its bytes are the
/// ones NIO's encoder writes for the same frame (a masked one with its payload masked under the same key), in every
/// length form, and messages on either side of the inline-payload limit cross the gateway whole both ways.
@Suite(.timeLimit(.minutes(1))) struct WebSocketFramingTests {
    /// What NIO's encoder writes for `frame`.
    static func encodedByNIO(_ frame: WebSocketFrame) throws -> [UInt8] {
        let channel = EmbeddedChannel(handler: WebSocketFrameEncoder())
        try channel.writeOutbound(frame)
        var bytes: [UInt8] = []
        while var buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readBytes(length: buffer.readableBytes)! }
        _ = try channel.finish()
        return bytes
    }

    static func asItCame(_ frame: WebSocketFrame) throws -> [UInt8] {
        let (head, rest) = try #require(WebSocketSideHandler.asItCame(frame, allocator: ByteBufferAllocator()))
        #expect((rest == nil) == (frame.data.readableBytes <= WebSocketSideHandler.inlinePayload))
        return Array(head.readableBytesView) + (rest.map { Array($0.readableBytesView) } ?? [])
    }

    @Test(arguments: [0, 1, 125, 126, 512, 513, 65535, 65536, 70_000])
    func aFrameAsItCameIsWhatNIOsEncoderWrites(length: Int) throws {
        let payload = ByteBuffer(bytes: (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        // An upstream's frame: unmasked, relayed as it is.
        for (opcode, fin) in [(WebSocketOpcode.text, true), (.binary, false), (.continuation, true), (.ping, true)] where opcode != .ping || length <= 125 {
            let frame = WebSocketFrame(fin: fin, opcode: opcode, data: payload)
            #expect(try Self.asItCame(frame) == Self.encodedByNIO(frame), "\(opcode) \(length)")
        }
        // A client's frame: received masked under its key; relayed with that key and the masked bytes, it is what
        // NIO's encoder writes for the unmasked payload under the same key — the bytes the client sent.
        let key = try #require(WebSocketMaskingKey([0x37, 0xFA, 0x21, 0x3D]))
        var masked = payload
        masked.webSocketMask(key)
        let received = WebSocketFrame(fin: true, rsv1: false, opcode: .binary, maskKey: key, data: masked)
        #expect(try Self.asItCame(received) == Self.encodedByNIO(WebSocketFrame(fin: true, opcode: .binary, maskKey: key, data: payload)))
        // Reserved bits are kept as they came.
        let reserved = WebSocketFrame(fin: false, rsv1: true, rsv2: false, rsv3: true, opcode: .text, data: payload)
        #expect(try Self.asItCame(reserved) == Self.encodedByNIO(reserved))
    }

    @Test func messagesAroundTheInlineLimitCrossTheGatewayWholeBothWays() async throws {
        try await RecordingFixture.run({ GatewayRelayTests.configuration($0) }) { fixture async throws in
            // The echo upstream answers "got:" + the text: both directions cross the limit (and the 126 form).
            let limit = WebSocketSideHandler.inlinePayload
            let texts = [limit - 4, limit, limit + 1, 12_000].map { length in
                String((0..<length).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
            }
            try await WebSocketClient.connect(url: fixture.wsBase + "/open/echo", logger: GatewayFixture.logger) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                _ = try await messages.next()  // the upstream's `seen:` description
                for text in texts {
                    try await outbound.write(.text(text))
                    guard case .text(let echoed) = try await messages.next() else { throw TestFailure("no echo") }
                    #expect(echoed == "got:" + text, "\(text.utf8.count) bytes")
                }
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
    }
}
