import Foundation

/// Debian's nginx as a real reverse proxy in front of a process under test, configured with the documentation's own
/// snippets (`Examples/nginx/*.conf`, included as they are, only their `proxy_pass` pointed at the process under
/// test), in a folder of its own (no root, no system configuration) — the Swift twin of `Tests/Browser/nginx.py`.
/// `scripts/test` installs nginx (`nginx-light`); without it the test fails, saying so.
struct Nginx {
    let process: SpawnedProcess
    let port: Int
    let folder: String

    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    static var binary: String? {
        ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The documentation's pages (`README.md` and `docs/**/*.md`), as text.
    static func documentationPages() throws -> [String] {
        var pages = [try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)]
        let docs = repository.appendingPathComponent("docs")
        if let enumerator = FileManager.default.enumerator(at: docs, includingPropertiesForKeys: nil) {
            for case let page as URL in enumerator where page.pathExtension == "md" {
                pages.append(try String(contentsOf: page, encoding: .utf8))
            }
        }
        return pages
    }

    /// `Examples/nginx/<name>` with its one loopback `proxy_pass` pointed at `upstreamPort`; throws when no page of the
    /// documentation (`docs/`: the MobileFirst and KAAZING guides) shows the file exactly as it is (the documented
    /// snippet is the tested file).
    static func snippet(_ name: String, upstreamPort: Int) throws -> String {
        let text = try String(contentsOf: repository.appendingPathComponent("Examples/nginx/\(name)"), encoding: .utf8)
        guard try documentationPages().contains(where: { $0.contains(text) }) else {
            throw TestFailure("no page of docs/ shows Examples/nginx/\(name) as it is")
        }
        let pattern = try NSRegularExpression(pattern: #"proxy_pass http://127\.0\.0\.1:\d+;"#)
        let range = NSRange(text.startIndex..., in: text)
        guard pattern.numberOfMatches(in: text, range: range) == 1 else {
            throw TestFailure("Examples/nginx/\(name) should have one loopback proxy_pass line")
        }
        return pattern.stringByReplacingMatches(in: text, range: range, withTemplate: "proxy_pass http://127.0.0.1:\(upstreamPort);")
    }

    /// nginx listening on a free loopback port with `serverBody` inside its `server { }` block, accepting within 15 s.
    static func start(serverBody: String) async throws -> Nginx {
        guard let binary else { throw TestFailure("nginx is not installed (apt-get install nginx-light; scripts/test does)") }
        let folder = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder + "/temp", withIntermediateDirectories: true)
        let port = try freePort()
        let user = getuid() == 0 ? "user root;\n" : ""
        let configuration = """
            \(user)worker_processes 1;
            daemon off;
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log info;
            events { worker_connections 256; }
            http {
                access_log \(folder)/access.log;
                client_body_temp_path \(folder)/temp/body;
                proxy_temp_path \(folder)/temp/proxy;
                fastcgi_temp_path \(folder)/temp/fastcgi;
                uwsgi_temp_path \(folder)/temp/uwsgi;
                scgi_temp_path \(folder)/temp/scgi;
                server {
                    listen 127.0.0.1:\(port);
            \(serverBody)
                }
            }

            """
        try configuration.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        let log = open(folder + "/stderr.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(log) }
        let process = try SpawnedProcess(binary, ["-p", folder, "-c", folder + "/nginx.conf", "-e", folder + "/error.log"], output: log, errors: log)
        let nginx = Nginx(process: process, port: port, folder: folder)
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if !process.isRunning { break }
            if (try? await RawHTTPConnection.exchange(port: port, target: "/nginx-probe"))?.status != nil { return nginx }
            try await Task.sleep(for: .milliseconds(100))
        }
        nginx.stop()
        let errors = (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? ""
        throw TestFailure("nginx did not accept on \(port) within 15 s: \(errors.suffix(600))")
    }

    /// Runs `body` with nginx started, and stops it however `body` ends.
    static func run<T: Sendable>(serverBody: String, _ body: (Nginx) async throws -> T) async throws -> T {
        let nginx = try await start(serverBody: serverBody)
        defer { nginx.stop() }
        return try await body(nginx)
    }

    /// SIGQUIT (nginx's graceful stop), then SIGKILL if it is still there 5 s later — on a thread of its own.
    func stop() {
        let process = self.process
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGQUIT)
        Thread {
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning, Date() < deadline { usleep(50_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }.start()
    }

    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw TestFailure("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
