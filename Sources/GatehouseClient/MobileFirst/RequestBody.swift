public import Foundation
import GatehouseProtocol

/// The body of a ``ResourceRequest``.
public enum RequestBody: Sendable {
    /// No body.
    case none
    /// A JSON document (`application/json`).
    case json(JSON)
    /// Form fields (`application/x-www-form-urlencoded`), in order.
    case form([(String, String)])
    /// Raw bytes with their content type.
    case data(Data, contentType: String)

    /// The encoded body and its content type.
    func encoded() throws(GatehouseClientError) -> (data: Data, contentType: String)? {
        switch self {
        case .none:
            return nil
        case .json(let json):
            do {
                return (try JSONEncoder().encode(json), "application/json; charset=UTF-8")
            } catch {
                throw .invalidArgument("the JSON body cannot be encoded: \(error)")
            }
        case .form(let fields):
            return (Data(FormEncoding.encode(fields).utf8), "application/x-www-form-urlencoded; charset=UTF-8")
        case .data(let data, let contentType):
            return (data, contentType)
        }
    }
}
