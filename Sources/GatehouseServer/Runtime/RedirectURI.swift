import Foundation
import GatehouseProtocol

/// The strict `redirect_uri` rule (MobileFirst APARs PI79018, PI99733): native clients use
/// `<scheme>://mfpredirecturi`; web clients use this server's `.../az/v1/authorization/redirect/<clientId>`.
enum RedirectURI {
    static func isValid(_ uri: String, clientID: String, platform: String, host: String?) -> Bool {
        guard let components = URLComponents(string: uri), let scheme = components.scheme, !scheme.isEmpty,
            components.query == nil, components.fragment == nil, components.user == nil, components.password == nil
        else { return false }
        if platform.lowercased() == "web" {
            guard scheme == "http" || scheme == "https", let host, let uriHost = components.host else { return false }
            let authority = components.port.map { "\(uriHost):\($0)" } ?? uriHost
            return authority.lowercased() == host.lowercased()
                && components.percentEncodedPath == "/mfp/api/az/v1/authorization/redirect/\(clientID)"
        }
        return components.host == ProtocolNames.nativeRedirectHost && components.port == nil
            && (components.path.isEmpty || components.path == "/")
    }
}
