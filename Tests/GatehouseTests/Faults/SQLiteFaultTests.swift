import Foundation
import GatehouseSQLite
import GatehouseStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 33's full-disk drill on the embedded SQLite store: `gatehouse serve` with its data folder on a small tmpfs
/// (mounting one needs root, which CI has; elsewhere the drill is skipped), the disk filled under it.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
struct SQLiteFaultTests {
    @Test func aFullDiskIsAnswered503NamedAndRecoveredFrom() async throws {
        let mount = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        guard Command.shell("mount -t tmpfs -o size=6m tmpfs '\(mount)'") == 0 else { throw TestFailure("mount -t tmpfs failed") }
        defer {
            _ = Command.shell("umount -l '\(mount)'")
            try? FileManager.default.removeItem(atPath: mount)
        }
        let logs = TestServer.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: logs) }
        let data = mount + "/data"
        let node = try await ServeProcess.start(["--data", data], logDirectory: logs)

        // Registrations succeed; then a filler takes all but a little of the disk, and they go on until the disk is full.
        var registered: [String] = []
        func register() async throws -> TestResponse {
            let client = try ProtocolClient(node.server)
            let response = try await client.registerRequest()
            if response.status == 201, let location = response.header("Location") { registered.append(String(location.split(separator: "/").last!)) }
            return response
        }
        #expect(try await register().status == 201)
        #expect(Command.shell("dd if=/dev/zero of='\(mount)/filler' bs=64k 2>/dev/null; rm -f '\(mount)/filler.small'") != -1)
        _ = Command.shell("truncate -s -256k '\(mount)/filler'")
        var statuses: [Int] = []
        for _ in 0..<400 {
            let response = try await register()
            statuses.append(response.status)
            if response.status == 503 {
                #expect(response.header("Retry-After") == "1")
                #expect(String(decoding: response.body, as: UTF8.self).contains("STORE_UNAVAILABLE"))
                break
            }
        }
        #expect(statuses.last == 503, "the disk never filled: \(statuses.count) registrations")
        #expect(Set(statuses).isSubset(of: [201, 503]), "a full disk answered \(Set(statuses))")
        // The operator sees it: the log names the full disk, /ready says so (its read still works).
        let ready = try await HTTP.send(.GET, node.server.baseURL + "/ready")
        #expect(ready.status == 503)
        #expect(String(decoding: ready.body, as: UTF8.self).contains(#""store":"full""#))
        try await Task.sleep(for: .milliseconds(200))
        #expect(node.output.contains("disk of the SQLite database is full"), "\(node.output.suffix(2000))")

        // Space again: the node writes again by itself.
        try FileManager.default.removeItem(atPath: mount + "/filler")
        var recovered = false
        for _ in 0..<50 where !recovered {
            recovered = try await register().status == 201
            if !recovered { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(recovered)
        try await node.stop()

        // Nothing answered 201 was lost.
        let store = try SQLiteStore(path: data + "/gatehouse.sqlite")
        for clientID in registered { #expect(try await store.registration(clientID: clientID) != nil, "\(clientID) lost") }
        print("drill full disk: \(statuses.count) registrations until the disk was full (statuses \(Set(statuses).sorted())), "
              + "\(registered.count) registrations kept, recovered after the space came back: \(recovered)")
    }
}
