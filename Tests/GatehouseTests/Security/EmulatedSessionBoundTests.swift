import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// Issue 54, finding 6: a client's emulated WebSockets that no downstream has attached to (half-open) are bounded per
/// client — the address as the gateway derives it — and keep little until their downstream comes. Before, the only
/// bound was the gateway's 10,000, and each half-open session could keep twice the largest message.
@Suite(.timeLimit(.minutes(3))) struct EmulatedSessionBoundTests {
    static func create(port: Int, from source: String) async throws -> RawHTTPResponse {
        try await RawHTTPConnection.exchange(port: port, target: "/echo/;e/ctm?.kn=4242",
                                             headers: ["Content-Type: text/plain; charset=utf-8", "X-WebSocket-Version: wseb-1.0",
                                                       "X-Sequence-No: 5", "X-Origin: \(KaazingEmulationTests.page)"], from: source)
    }

    @Test func oneClientsHalfOpenSessionsAreBoundedWhileAnotherStillGetsIn() async throws {
        try await RecordingFixture.run({ KaazingEmulationTests.configuration($0, scheme: nil) }) { fixture in
            let bound = EmulatedWebSockets().halfOpenPerClient
            var created: [RawHTTPResponse] = []
            for _ in 0..<bound {
                let answer = try await Self.create(port: fixture.port, from: "127.0.0.1")
                #expect(answer.status == 201, "\(answer.status) \(answer.text)")
                created.append(answer)
            }
            let refused = try await Self.create(port: fixture.port, from: "127.0.0.1")
            #expect(refused.status == 429)
            #expect(refused.header("Retry-After") == "1")
            #expect(refused.text.contains("\"error\":\"too_many_requests\""), "\(refused.text)")
            #expect(try await Self.create(port: fixture.port, from: "127.0.0.2").status == 201)

            // The first session's client sends a small message before its downstream (kept for it), then asks it: the
            // session is no longer half-open, and the client may create one more.
            let (upstream, downstream) = try EmulationWire.locations(created[0], port: fixture.port)
            let hello = KaazingEmulation.encode(.text(Array("hello".utf8)))
            #expect(try await EmulationWire.upstream(port: fixture.port, path: upstream, sequence: 6, frames: hello).status == 200)
            let stream = try await EmulationWire.downstream(port: fixture.port, path: downstream, sequence: 6)
            guard case .text(let seen) = try await stream.frame() else { throw TestFailure("no seen: frame") }
            #expect(String(decoding: seen, as: UTF8.self).hasPrefix("seen:"))
            guard case .text(let echoed) = try await stream.frame() else { throw TestFailure("no echo") }
            #expect(String(decoding: echoed, as: UTF8.self) == "got:hello")
            var again = 0
            for _ in 0..<50 where again != 201 {
                again = try await Self.create(port: fixture.port, from: "127.0.0.1").status
                if again != 201 { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(again == 201)
        }
    }

    @Test func aHalfOpenSessionTakesALittleUpstreamOnly() async throws {
        try await RecordingFixture.run({ KaazingEmulationTests.configuration($0, scheme: nil) }) { fixture in
            let created = try await Self.create(port: fixture.port, from: "127.0.0.3")
            let (upstream, _) = try EmulationWire.locations(created, port: fixture.port)
            // 10 KiB messages (the recording upstream answers each with its copy, which waits for the downstream).
            let chunk = KaazingEmulation.encode(.binary(Array(repeating: 0x61, count: 10 * 1024)))
            var statuses: [Int] = []
            for sequence in UInt64(6)..<14 {
                statuses.append(try await EmulationWire.upstream(port: fixture.port, path: upstream, sequence: sequence, frames: chunk).status)
            }
            // Six (60 KiB) before any downstream are taken; the seventh crosses 64 KiB, is refused and the session is gone.
            #expect(statuses == [200, 200, 200, 200, 200, 200, 400, 404], "\(statuses)")
        }
    }

    /// A session whose client has asked its downstream is not half-open, though the downstream has not reached it yet:
    /// the gateway writes a downstream's head before its connection attaches to the session, so the client may send
    /// its next upstream request in between. Before, such a request over 64 KiB was refused as a half-open session's
    /// (KAAZING's `data/echo.binary.payload.length.65536` failed once in a loaded run). The session's own steps are
    /// played here in the order the race gives them: the downstream asked, an 80 KiB upstream body, then the downstream.
    @Test func aSessionWhoseDownstreamIsAskedIsNotHalfOpenBeforeItAttaches() async throws {
        try await RecordingFixture.run({ KaazingEmulationTests.configuration($0, scheme: nil) }) { fixture in
            let created = try await Self.create(port: fixture.port, from: "127.0.0.4")
            let (upstream, downstream) = try EmulationWire.locations(created, port: fixture.port)
            let id = String(upstream.split(separator: "?")[0].split(separator: "/").last ?? "")
            guard let session = fixture.gateway.emulatedWebSockets.session(id) else { throw TestFailure("no session \(id) (\(upstream))") }
            // Eight messages of 10 KiB (the recording upstream takes frames of at most 16 KiB).
            let messages = (0..<8).map { String(repeating: String(UnicodeScalar(UInt8(0x61 + $0))), count: 10 * 1024) }
            let body = messages.flatMap { KaazingEmulation.encode(.text(Array($0.utf8))) }
            let refusals: (asked: String?, upstream: String?) = await withCheckedContinuation { done in
                session.execute { emulated in
                    let asked = emulated.downstreamRequested(sequence: 6)
                    let taken = emulated.upstream(sequence: 6, body: body, bytes: true)
                    done.resume(returning: (asked?.description, taken?.description))
                }
            }
            #expect(refusals.asked == nil)
            #expect(refusals.upstream == nil, "\(refusals.upstream ?? "")")
            // The client's next downstream (sequence 7: 6 was asked above) carries the echoes.
            let stream = try await EmulationWire.downstream(port: fixture.port, path: downstream, sequence: 7)
            var echoed: [String] = []
            while echoed.count < messages.count {
                guard case .text(let text) = try await stream.frame() else { throw TestFailure("not a text frame") }
                let string = String(decoding: text, as: UTF8.self)
                if !string.hasPrefix("seen:") { echoed.append(string) }
            }
            #expect(echoed == messages.map { "got:" + $0 })
        }
    }
}
