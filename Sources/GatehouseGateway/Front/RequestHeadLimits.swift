/// How large a request head may be: one header field (or the request target) at most 16 KiB, all of them 32 KiB,
/// at most 100 fields. The gateway's head reader (``HTTPMessageHead``) enforces them; a head over them is answered
/// `431` (or `400` on a connection already used) and the connection closed. The request target has its own, smaller limit
/// (``RequestTarget/maxLength``, `414`).
///
/// Besides bounding what a client can make the gateway hold, the limits keep every head the proxy forwards well
/// under the 64 KiB write-buffer high-water mark of its upstream connections: a larger head followed by a body
/// trips a precondition in AsyncHTTPClient's request state machine ("request body producing can not start before
/// we have successfully send the header") and kills the process.
enum RequestHeadLimits {
    static let maxFieldSize = 16 * 1024
    static let maxTotalSize = 32 * 1024
    static let maxFieldCount = 100
}
