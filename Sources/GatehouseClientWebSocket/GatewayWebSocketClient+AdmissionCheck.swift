import Foundation
import GatehouseProtocol

extension GatewayWebSocketClient {
    /// Asks the gateway whether `authorization` is admitted to `url`'s service: an `OPTIONS` with `Max-Forwards: 0`,
    /// which a Gatehouse gateway answers itself (`200` when admitted, or its `401`/`403`) and never forwards.
    /// Returns the status, the `WWW-Authenticate` value and the `error` of a JSON body (the gateway's refusals say
    /// `unauthorized` or `forbidden`; an upstream's answer, through a gateway that forwards the request, does not),
    /// and whether the gateway itself admitted the answer (its `Allow`, no body).
    public static func check(
        url: String, authorization: String, configuration: GatewayWebSocketConfiguration = .init()
    ) async throws -> (status: Int, challenge: String?, error: String?, admitted: Bool) {
        let response = try await OneShotHTTPRequest.send(
            .OPTIONS, url: try GatewayWebSocketURL(url), headers: [("Max-Forwards", "0"), ("Authorization", authorization)],
            configuration: configuration
        )
        let error = (try? JSONDecoder().decode([String: String].self, from: Data(response.body)))?["error"]
        let status = Int(response.head.status.code)
        let admitted = status == 200 && response.head.headers.first(name: "Allow") == GatewayAdmissionCheck.allow && response.body.isEmpty
        return (status, response.head.headers.first(name: "WWW-Authenticate"), error, admitted)
    }
}
