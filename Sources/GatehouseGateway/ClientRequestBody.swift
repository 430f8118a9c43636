import Hummingbird
import NIOCore
import Synchronization

/// A client's request body as the proxy streams it upstream, noting whether reading it failed: a body the client
/// framed wrongly (a malformed chunk, a connection closed before `Content-Length` bytes) is the client's fault and
/// answered `400`, not the `502` of an upstream that failed.
struct ClientRequestBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// Whether reading the client's body threw.
    final class ReadFailure: Sendable {
        private let failed = Mutex(false)
        var happened: Bool { failed.withLock { $0 } }
        func record() { failed.withLock { $0 = true } }
    }

    /// The body can be read once. AsyncHTTPClient may ask for a second iterator (retrying on a stale pooled
    /// connection); NIO traps on a second iterator of the client's body, so this one makes the retry fail instead.
    final class Claim: Sendable {
        private let taken = Mutex(false)
        func take() -> Bool { taken.withLock { was in defer { was = true }; return !was } }
    }

    struct AlreadyRead: Error {}

    let body: RequestBody
    let failure: ReadFailure
    let claim = Claim()

    init(body: RequestBody, failure: ReadFailure) {
        self.body = body
        self.failure = failure
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator?
        let failure: ReadFailure

        mutating func next() async throws -> ByteBuffer? {
            guard base != nil else { throw AlreadyRead() }
            do {
                return try await base?.next()
            } catch {
                failure.record()
                throw error
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: claim.take() ? body.makeAsyncIterator() : nil, failure: failure)
    }
}
