@testable import GatehouseProtocol
import Testing

/// KAAZING's emulated transport read as a downstream's bytes arrive: the frames a body holds are the same however the
/// body is cut into reads; a frame over the bound, or an unknown type, fails even before its end arrives.
@Suite(.timeLimit(.minutes(1))) struct KaazingEmulationFrameReaderTests {
    static let frames: [KaazingEmulation.Frame] = [
        .text(Array("hello".utf8)), .binary((0...255).map { UInt8($0) }), .command(.nop), .ping, .pong,
        .text(Array(repeating: 0x41, count: 20_000)), .binary([]), .command(.close), .command(.reconnect),
    ]

    static var body: [UInt8] {
        var bytes: [UInt8] = []
        for frame in frames { KaazingEmulation.encode(frame, into: &bytes) }
        return bytes
    }

    /// What the reader takes out of `body` cut at `cuts`: a `NOP` is none.
    static func read(_ body: [UInt8], cutAt sizes: some Sequence<Int>) throws -> [KaazingEmulation.Frame] {
        var reader = KaazingEmulation.FrameReader(maximumLength: 1 << 20)
        var read: [KaazingEmulation.Frame] = []
        var index = 0
        var sizes = sizes.makeIterator()
        while index < body.count {
            let size = min(sizes.next() ?? body.count, body.count - index)
            reader.append(body[index..<(index + size)])
            index += size
            read += try reader.frames()
        }
        return read
    }

    @Test func theFramesAreTheSameHoweverTheBodyIsCut() throws {
        let expected = Self.frames.filter { $0 != .command(.nop) }
        #expect(try KaazingEmulation.frames(in: Self.body, maximumLength: 1 << 20) == expected)
        #expect(try Self.read(Self.body, cutAt: repeatElement(1, count: Self.body.count)) == expected)
        var generator = SplitMix64(seed: 53)
        for _ in 0..<50 {
            let sizes = (0..<Self.body.count).map { _ in Int.random(in: 1...700, using: &generator) }
            #expect(try Self.read(Self.body, cutAt: sizes) == expected)
        }
    }

    @Test func aFrameCutAcrossReadsWaitsForTheRest() throws {
        var reader = KaazingEmulation.FrameReader(maximumLength: 1 << 20)
        let frame = KaazingEmulation.encode(.binary(Array(repeating: 7, count: 300)))
        reader.append(frame.prefix(2))  // the type and half the length
        #expect(try reader.frames().isEmpty)
        reader.append(frame.dropFirst(2).dropLast())
        #expect(try reader.frames().isEmpty)
        reader.append(frame.suffix(1))
        #expect(try reader.frames() == [.binary(Array(repeating: 7, count: 300))])
    }

    @Test func anOversizedOrUnknownFrameFailsBeforeItsEnd() {
        var reader = KaazingEmulation.FrameReader(maximumLength: 100)
        reader.append(KaazingEmulation.encode(.binary(Array(repeating: 1, count: 101))).prefix(3))
        #expect(throws: KaazingEmulation.FormatError.self) { try reader.frames() }
        var unterminated = KaazingEmulation.FrameReader(maximumLength: 100)
        unterminated.append([0x00] + Array(repeating: 0x41, count: 101))  // a text frame without its 0xFF, over the bound
        #expect(throws: KaazingEmulation.FormatError.self) { try unterminated.frames() }
        var unknown = KaazingEmulation.FrameReader(maximumLength: 100)
        unknown.append([0x85, 0x01, 0x00])
        #expect(throws: KaazingEmulation.FormatError("an unknown frame type 133")) { try unknown.frames() }
    }
}
