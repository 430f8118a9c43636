import HTTPTypes
import NIOCore

extension GatewayAnswer {
    /// The answer as the bytes written to a client by the event-loop relay (``GatewayHTTPHandler``): the status line
    /// in the client's version, the answer's fields, its `Content-Length`, `Connection: close` when the connection
    /// ends after it (`keep-alive` to an HTTP/1.0 client otherwise), and the body unless `withBody` is `false` (the
    /// answer to a `HEAD`).
    func bytes(minorVersion: Int, close: Bool, withBody: Bool, allocator: ByteBufferAllocator) -> ByteBuffer {
        let fields = headers.filter { $0.name != .contentLength && $0.name != .connection }
        let capacity = 128 + status.reasonPhrase.utf8.count + fields.reduce(0) { $0 + HeadBytesWriter.fieldLength($1.name.rawName, $1.value) }
        var out = HeadBytesWriter.buffer(capacity: capacity, allocator: allocator) { out in
            out.write(minorVersion == 0 ? "HTTP/1.0 " : "HTTP/1.1 ")
            out.write(String(status.code))
            out.write(" ")
            out.write(status.reasonPhrase)
            out.write("\r\n")
            for field in fields { out.writeField(field.name.rawName, field.value) }
            out.writeField("Content-Length", String(body.readableBytes))
            if close {
                out.write("Connection: close\r\n")
            } else if minorVersion == 0 {
                out.write("Connection: keep-alive\r\n")
            }
            out.write("\r\n")
        }
        if withBody { out.writeImmutableBuffer(body) }
        return out
    }
}
