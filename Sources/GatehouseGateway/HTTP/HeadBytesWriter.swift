import NIOCore

/// Writes a head's pieces straight into a buffer's memory, for the relay's rewritten heads
/// (``UpstreamRequestHead``): one capacity check for the whole head, where a `ByteBuffer` write per piece costs a
/// capacity, uniqueness and exclusivity check each time (a relayed head has dozens of pieces).
struct HeadBytesWriter: ~Copyable {
    private let memory: UnsafeMutableRawBufferPointer
    /// The bytes written so far.
    private(set) var count = 0

    private init(_ memory: UnsafeMutableRawBufferPointer) {
        self.memory = memory
    }

    /// A buffer of at most `capacity` bytes written by `body`; writing more than `capacity` is a programming error
    /// and stops the process rather than write past the memory.
    static func buffer(capacity: Int, allocator: ByteBufferAllocator, _ body: (inout HeadBytesWriter) -> Void) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: capacity)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: capacity) { memory in
            var writer = HeadBytesWriter(UnsafeMutableRawBufferPointer(rebasing: memory[..<capacity]))
            body(&writer)
            return writer.count
        }
        return buffer
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        precondition(count + bytes.count <= memory.count, "a head larger than its capacity")
        (memory.baseAddress! + count).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        count += bytes.count
    }

    mutating func write(_ bytes: Slice<UnsafeRawBufferPointer>) { write(UnsafeRawBufferPointer(rebasing: bytes)) }

    mutating func write(_ text: StaticString) {
        write(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func write(_ text: String) {
        let written: Void? = text.utf8.withContiguousStorageIfAvailable { write(UnsafeRawBufferPointer($0)) }
        if written == nil {
            var text = text
            text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
        }
    }

    /// `name: value` and CRLF.
    mutating func writeField(_ name: String, _ value: String) {
        write(name)
        write(": ")
        write(value)
        write("\r\n")
    }

    /// How many bytes ``writeField(_:_:)`` writes.
    static func fieldLength(_ name: String, _ value: String) -> Int { name.utf8.count + value.utf8.count + 4 }
}
