import AsyncHTTPClient
import Foundation
import GatehouseProtocol
import NIOCore
import NIOHTTP1

/// One HTTP exchange's answer.
struct TestResponse: Sendable {
    let status: Int
    let headers: HTTPHeaders
    let body: Data

    var json: JSON? { try? JSONDecoder().decode(JSON.self, from: body) }
    func header(_ name: String) -> String? { headers.first(name: name) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(type, from: body) }
}

/// Plain HTTP for tests: no redirects followed, bounded time.
enum HTTP {
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(30), read: .seconds(60)))
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    static func send(_ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: Data? = nil) async throws -> TestResponse {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 4 * 1024 * 1024)
        return TestResponse(status: Int(response.status.code), headers: response.headers, body: Data(buffer: buffer))
    }

    static func postJSON(_ url: String, _ value: some Encodable) async throws -> TestResponse {
        try await send(.POST, url, headers: [("Content-Type", "application/json; charset=UTF-8")], body: try JSONEncoder().encode(value))
    }

    static func postForm(_ url: String, _ fields: [(String, String)], headers: [(String, String)] = []) async throws -> TestResponse {
        try await send(.POST, url, headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers, body: Data(formEncode(fields).utf8))
    }

    static func formEncode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }
}
