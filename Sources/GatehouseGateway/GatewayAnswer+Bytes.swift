import HTTPTypes
import NIOCore

extension GatewayAnswer {
    /// The answer as the bytes written to a client by the event-loop relay (``GatewayHTTPHandler``): the status line
    /// in the client's version, the answer's fields, its `Content-Length`, `Connection: close` when the connection
    /// ends after it (`keep-alive` to an HTTP/1.0 client otherwise), and the body unless `withBody` is `false` (the
    /// answer to a `HEAD`).
    func bytes(minorVersion: Int, close: Bool, withBody: Bool, allocator: ByteBufferAllocator) -> ByteBuffer {
        var out = allocator.buffer(capacity: 128 + body.readableBytes + headers.count * 32)
        out.writeStaticString(minorVersion == 0 ? "HTTP/1.0 " : "HTTP/1.1 ")
        out.writeString(String(status.code))
        out.writeStaticString(" ")
        out.writeString(status.reasonPhrase)
        out.writeStaticString("\r\n")
        for field in headers where field.name != .contentLength && field.name != .connection {
            out.writeString(field.name.rawName)
            out.writeStaticString(": ")
            out.writeString(field.value)
            out.writeStaticString("\r\n")
        }
        out.writeStaticString("Content-Length: ")
        out.writeString(String(body.readableBytes))
        out.writeStaticString("\r\n")
        if close {
            out.writeStaticString("Connection: close\r\n")
        } else if minorVersion == 0 {
            out.writeStaticString("Connection: keep-alive\r\n")
        }
        out.writeStaticString("\r\n")
        if withBody { out.writeImmutableBuffer(body) }
        return out
    }
}
