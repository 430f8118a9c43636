import Foundation
import GatehouseProtocol

/// The strict `redirect_uri` rule (MobileFirst APARs PI79018, PI99733): native clients use
/// `<scheme>://mfpredirecturi`; web clients use this server's `.../az/v1/authorization/redirect/<clientId>`,
/// absolute (on this server's host) or, as the web SDK sends it when the app shares the server's origin,
/// the relative path alone.
enum RedirectURI {
    /// The path of the web redirect target of `clientID`.
    static func webPath(clientID: String) -> String { "/mfp/api/az/v1/authorization/redirect/\(clientID)" }

    static func isValid(_ uri: String, clientID: String, platform: String, host: String?) -> Bool {
        if platform.lowercased() == "web", uri.hasPrefix("/"), !uri.hasPrefix("//") {
            return uri == webPath(clientID: clientID)
        }
        guard let components = URLComponents(string: uri), let scheme = components.scheme, !scheme.isEmpty,
            components.query == nil, components.fragment == nil, components.user == nil, components.password == nil
        else { return false }
        if platform.lowercased() == "web" {
            guard scheme == "http" || scheme == "https", let host, let uriHost = components.host else { return false }
            let authority = components.port.map { "\(uriHost):\($0)" } ?? uriHost
            return authority.lowercased() == host.lowercased()
                && components.percentEncodedPath == webPath(clientID: clientID)
        }
        return components.host == ProtocolNames.nativeRedirectHost && components.port == nil
            && (components.path.isEmpty || components.path == "/")
    }
}
