import BenchmarkSupport
import Foundation

/// nginx (Debian's `nginx-light`) as a plain reverse proxy with upstream keep-alive in front of the same echo
/// upstream: the peer the gateway is compared with, HTTP and WebSocket (`Upgrade` passed on).
///
/// A WebSocket upgrade goes upstream on a new connection (`echo_ws`, no keep-alive pool), as the gateway's do:
/// sent on a pooled connection that already carried HTTP requests, Hummingbird's upstream answers an upgrade
/// with `307` (an upgrade must be a connection's first request there), which is why HummingbirdWSClient's
/// upgrades through nginx used to fail while curl's, on a fresh pool, succeeded.
struct NginxProxy {
    let process: Process
    let port: Int
    let directory: URL

    /// A free loopback port (bound and released: nginx binds it a moment later).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Wrk.Failure(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts `nginx` (worker processes: one per core, as the gateway's event loops) proxying to `upstreamPort`.
    static func start(upstreamPort: Int) throws -> NginxProxy {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("gatehouse-bench-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try freePort()
        let configuration = """
            worker_processes auto;
            daemon off;
            pid \(directory.path)/nginx.pid;
            error_log \(directory.path)/error.log error;
            events { worker_connections 4096; }
            http {
                access_log off;
                client_body_temp_path \(directory.path)/body;
                proxy_temp_path \(directory.path)/proxy;
                map $http_upgrade $connection_upgrade { default upgrade; '' ''; }
                map $http_upgrade $echo_upstream { default echo_ws; '' echo; }
                upstream echo { server 127.0.0.1:\(upstreamPort); keepalive 512; }
                upstream echo_ws { server 127.0.0.1:\(upstreamPort); }
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://$echo_upstream;
                        proxy_http_version 1.1;
                        proxy_set_header Upgrade $http_upgrade;
                        proxy_set_header Connection $connection_upgrade;
                        proxy_read_timeout 300s;
                    }
                }
            }
            """
        let file = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-c", file.path, "-p", directory.path, "-e", directory.appendingPathComponent("error.log").path]
        try process.run()
        // Up once it has written its pid file, after binding (10 s at most).
        for _ in 0..<100 {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("nginx.pid").path) {
                usleep(200_000)
                return NginxProxy(process: process, port: port, directory: directory)
            }
            if !process.isRunning { break }
            usleep(100_000)
        }
        process.terminate()
        throw Wrk.Failure(description: "nginx did not start: \((try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? "")")
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
