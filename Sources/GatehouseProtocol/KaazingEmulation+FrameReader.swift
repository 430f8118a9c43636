extension KaazingEmulation {
    /// Reads frames as their bytes arrive (a downstream response's body, read by a client): bytes are appended as
    /// they come, and each complete frame is taken out; a frame cut across reads waits for the rest.
    package struct FrameReader: Sendable {
        private var buffer: [UInt8] = []
        private var index = 0
        private let maximumLength: Int

        /// A reader of messages of at most `maximumLength` bytes.
        package init(maximumLength: Int) { self.maximumLength = maximumLength }

        /// The bytes of the next read.
        package mutating func append(_ bytes: some Sequence<UInt8>) {
            if index > 0 {
                buffer.removeFirst(index)
                index = 0
            }
            buffer += bytes
        }

        /// The complete frames read so far (a `NOP` command is none); an unknown frame type or command, or a length
        /// over the bound, throws.
        package mutating func frames() throws(FormatError) -> [Frame] {
            var frames: [Frame] = []
            while index < buffer.count, case let (parsed, next)? = try KaazingEmulation.frame(in: buffer, at: index, maximumLength: maximumLength) {
                frames += parsed
                index = next
            }
            return frames
        }
    }
}
