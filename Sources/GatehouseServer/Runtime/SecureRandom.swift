#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// Random bytes for the secrets the server hands out (authorization codes, token ids), from the kernel's CSPRNG
/// (`/dev/urandom`), read 4 KiB at a time.
///
/// `SystemRandomNumberGenerator` (and swift-crypto's `SymmetricKey`, which uses it) makes one `getrandom` system
/// call per 8 bytes: two for a token id, four for a code. Here one read serves about 250 token ids. Bytes handed out
/// are wiped from the pool. Where `/dev/urandom` cannot be read, `SystemRandomNumberGenerator` is used.
enum SecureRandom {
    private struct Pool {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var offset = 4096
        var device: Int32 = -2
    }

    private static let pool = Mutex(Pool())

    /// `count` random bytes (at most 4096).
    static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= 4096)
        return pool.withLock { pool in
            if pool.offset + count > pool.bytes.count {
                guard refill(&pool) else { return fallback(count) }
            }
            let range = pool.offset..<pool.offset + count
            let taken = Array(pool.bytes[range])
            for index in range { pool.bytes[index] = 0 }
            pool.offset += count
            return taken
        }
    }

    /// A random (version 4) UUID in lowercase text, such as a new client's id. Foundation's `UUID()` on Linux opens,
    /// reads and closes `/dev/urandom` for each one.
    static func uuidString() -> String {
        var b = Self.bytes(16)
        b[6] = b[6] & 0x0F | 0x40   // version 4
        b[8] = b[8] & 0x3F | 0x80   // RFC 9562 variant
        let uuid = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        return uuid.uuidString.lowercased()
    }

    private static func refill(_ pool: inout Pool) -> Bool {
        if pool.device == -2 { pool.device = open("/dev/urandom", O_RDONLY | O_CLOEXEC) }
        guard pool.device >= 0 else { return false }
        let device = pool.device
        let filled = pool.bytes.withUnsafeMutableBytes { buffer -> Bool in
            var done = 0
            while done < buffer.count {
                let count = read(device, buffer.baseAddress! + done, buffer.count - done)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
        if filled { pool.offset = 0 }
        return filled
    }

    private static func fallback(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
