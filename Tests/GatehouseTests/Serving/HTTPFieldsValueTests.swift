import GatehouseHTTP
import HTTPTypes
import Testing

/// `HTTPFields.value(of:)` reads what `HTTPFields`' own subscript reads, field for field.
@Suite(.timeLimit(.minutes(3))) struct HTTPFieldsValueTests {
    @Test func valuesReadAsTheSubscriptReadsThem() throws {
        let cases: [[(String, String)]] = [
            [],
            [("Authorization", "Bearer a")],
            [("authorization", "Basic x"), ("Content-Type", "text/plain"), ("AUTHORIZATION", "Basic y")],
            [("Cookie", "a=1"), ("cookie", "b=2")],
            [("Content-Type", ""), ("Content-Type", "application/json")],
        ]
        for fields in cases {
            var headers = HTTPFields()
            for (name, value) in fields { headers.append(HTTPField(name: try #require(HTTPField.Name(name)), value: value)) }
            for name in [HTTPField.Name.authorization, .contentType, .cookie, .accept] {
                #expect(headers.value(of: name) == headers[name], "\(fields) \(name)")
            }
        }
    }
}
