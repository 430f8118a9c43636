import GatehouseProtocol
import NIOCore
import NIOPosix

/// A sketch, for measurement only, of an HTTP/1.1 relay that works on bytes instead of NIO's codec objects: it finds
/// each message's head in the bytes read, checks the request's `Authorization` against one expected value (in
/// constant time, as the gateway's remembered admissions do), writes the head upstream without `Authorization` and
/// with an `X-Forwarded-For`, then relays `Content-Length` bodies as they are; the answer's head and body go back as
/// read. Nothing else of HTTP is handled (no chunked bodies, no `HEAD`, no upgrades, no pipelining, no limits but the
/// head's size): it is not a proxy to use, but the figure of what the gateway's data path could cost without NIO's
/// codec, for the decision whether to build one.
enum HeadRewritingRelay {
    static func start(upstreamHost: String, upstreamPort: Int, authorization: String, group: any EventLoopGroup) async throws -> any Channel {
        let expected = Array(authorization.utf8)
        return try await RelayServer.start(upstreamHost: upstreamHost, upstreamPort: upstreamPort, group: group) { client, upstream in
            let clientSide = Side(role: .request(expectedAuthorization: expected))
            let upstreamSide = Side(role: .response)
            clientSide.partner = upstreamSide
            upstreamSide.partner = clientSide
            try client.pipeline.syncOperations.addHandler(clientSide)
            try upstream.pipeline.syncOperations.addHandler(upstreamSide)
        }
    }

    /// One side: reads its socket's messages, writes them to the partner's.
    final class Side: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        enum Role {
            case request(expectedAuthorization: [UInt8])
            case response
        }

        let role: Role
        var partner: Side?
        private var context: ChannelHandlerContext?
        /// Bytes of a head not complete yet.
        private var pending: ByteBuffer?
        /// Body bytes of the current message still to relay.
        private var bodyLeft = 0

        init(role: Role) { self.role = role }

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
            partner = nil
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            if var pending {
                self.pending = nil
                pending.writeBuffer(&bytes)
                bytes = pending
            }
            while bytes.readableBytes > 0 {
                if bodyLeft > 0 {
                    let count = min(bodyLeft, bytes.readableBytes)
                    partner?.context?.write(wrapOutboundOut(bytes.readSlice(length: count)!), promise: nil)
                    bodyLeft -= count
                    continue
                }
                guard let headLength = Self.headLength(bytes) else {
                    if bytes.readableBytes > 16 * 1024 { context.close(promise: nil) } else { pending = bytes }
                    return
                }
                let head = bytes.readSlice(length: headLength)!
                guard let (out, length) = relayedHead(head, allocator: context.channel.allocator) else {
                    context.close(promise: nil)
                    return
                }
                partner?.context?.write(wrapOutboundOut(out), promise: nil)
                bodyLeft = length
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) { partner?.context?.flush() }

        func channelInactive(context: ChannelHandlerContext) { partner?.context?.close(promise: nil) }

        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }

        /// The length of the head at the start of `bytes`, up to and with its blank line; `nil` until it is all there.
        static func headLength(_ bytes: ByteBuffer) -> Int? {
            bytes.withUnsafeReadableBytes { raw -> Int? in
                guard raw.count >= 4 else { return nil }
                var index = 3
                while index < raw.count {
                    let byte = raw[index]
                    if byte == 0x0A, raw[index - 1] == 0x0D, raw[index - 2] == 0x0A, raw[index - 3] == 0x0D { return index + 1 }
                    index += byte == 0x0A || byte == 0x0D ? 1 : 2
                }
                return nil
            }
        }

        /// The head as it goes to the partner and its body's length; `nil` to close (a refused `Authorization`, a
        /// body this sketch does not frame).
        private func relayedHead(_ head: ByteBuffer, allocator: ByteBufferAllocator) -> (ByteBuffer, Int)? {
            head.withUnsafeReadableBytes { raw -> (ByteBuffer, Int)? in
                var out = allocator.buffer(capacity: raw.count + 32)
                var length = 0
                var authorized = false
                var lineStart = 0
                var first = true
                while lineStart < raw.count {
                    var lineEnd = lineStart
                    while raw[lineEnd] != 0x0A { lineEnd += 1 }
                    let line = UnsafeRawBufferPointer(rebasing: raw[lineStart...lineEnd])
                    lineStart = lineEnd + 1
                    if first {
                        first = false
                        out.writeBytes(line)
                        continue
                    }
                    if line.count == 2 { break }
                    guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
                    let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
                    var valueStart = colon + 1
                    while valueStart < line.count, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
                    let value = UnsafeRawBufferPointer(rebasing: line[valueStart..<(line.count - 2)])
                    if Self.named(name, "content-length") {
                        var number = 0
                        for byte in value {
                            guard byte >= 0x30, byte <= 0x39, number < 1 << 40 else { return nil }
                            number = number * 10 + Int(byte - 0x30)
                        }
                        length = number
                    } else if Self.named(name, "transfer-encoding") {
                        return nil
                    } else if case .request(let expected) = role, Self.named(name, "authorization") {
                        authorized = expected.withUnsafeBytes { ConstantTime.sameBytes(value, $0) }
                        continue
                    }
                    out.writeBytes(line)
                }
                if case .request = role {
                    guard authorized else { return nil }
                    out.writeStaticString("X-Forwarded-For: 127.0.0.1\r\n")
                }
                out.writeStaticString("\r\n")
                return (out, length)
            }
        }

        /// Whether `name` is `lowercased` in any case.
        static func named(_ name: UnsafeRawBufferPointer, _ lowercased: StaticString) -> Bool {
            guard name.count == lowercased.utf8CodeUnitCount else { return false }
            let expected = UnsafeRawBufferPointer(start: lowercased.utf8Start, count: lowercased.utf8CodeUnitCount)
            for index in 0..<name.count where name[index] | 0x20 != expected[index] { return false }
            return true
        }
    }
}
