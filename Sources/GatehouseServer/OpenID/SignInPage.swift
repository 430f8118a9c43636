import Foundation
import GatehouseProtocol

/// The hosted sign-in page's HTML (`Assets/sign-in.html`), in the user's language, with the operator's theme.
///
/// Every text is escaped; the page has no inline script or style (its CSP allows only `/oidc/assets/`), and the
/// request, its CSRF token and the strings the script needs travel in `data-` attributes.
public struct SignInTheme: Sendable {
    /// Strings by language, then key: the built-in ones with the operator's over them.
    let strings: [String: [String: String]]
    /// The operator's stylesheet (served as `/oidc/assets/theme.css`, after the page's own).
    let css: String

    /// The built-in theme: English, German and French, no extra style.
    public static let builtIn = SignInTheme(strings: SignInTheme.builtInStrings, css: "")

    static let builtInStrings: [String: [String: String]] =
        (try? JSONDecoder().decode([String: [String: String]].self, from: Data(PackageResources.strings_json))) ?? [:]

    /// A theme from a folder: `theme.css` (any style; `--gatehouse-accent` and friends are the page's colours) and
    /// `strings.json` (`{"en": {"heading": "Sign in to {client} with your Example ID"}, "nl": {…}}`: keys of the
    /// built-in strings, any language; a language the built-in ones lack falls back to English key by key).
    ///
    /// - Throws: an error naming the file that cannot be read.
    public static func load(folder: String) throws -> SignInTheme {
        let cssPath = (folder as NSString).appendingPathComponent("theme.css")
        let stringsPath = (folder as NSString).appendingPathComponent("strings.json")
        var css = ""
        if FileManager.default.fileExists(atPath: cssPath) { css = try String(contentsOfFile: cssPath, encoding: .utf8) }
        var strings = builtInStrings
        if FileManager.default.fileExists(atPath: stringsPath) {
            let data = try Data(contentsOf: URL(fileURLWithPath: stringsPath))
            guard let own = try? JSONDecoder().decode([String: [String: String]].self, from: data) else {
                throw ThemeError(description: "\(stringsPath): must be {\"language\": {\"key\": \"text\"}}")
            }
            for (language, values) in own {
                strings[language.lowercased(), default: builtInStrings["en"] ?? [:]].merge(values) { _, new in new }
            }
        }
        return SignInTheme(strings: strings, css: css)
    }

    struct ThemeError: Error, CustomStringConvertible { let description: String }

    /// The language to answer in: the first of `uiLocales` (OpenID's `ui_locales`), then of `Accept-Language` by
    /// weight, that the theme has (`de-CH` → `de`); English otherwise.
    func language(uiLocales: [String], acceptLanguage: String?) -> String {
        var wanted = uiLocales
        let ranges = (acceptLanguage ?? "").split(separator: ",").compactMap { part -> (String, Double)? in
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first, !tag.isEmpty else { return nil }
            let weight = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return (tag, weight)
        }
        wanted += ranges.enumerated().sorted { ($0.element.1, -$0.offset) > ($1.element.1, -$1.offset) }.map(\.element.0)
        for tag in wanted {
            let lowered = tag.lowercased()
            if strings[lowered] != nil { return lowered }
            if let primary = lowered.split(separator: "-").first, strings[String(primary)] != nil { return String(primary) }
        }
        return "en"
    }

    /// The strings of `language`, English for keys it lacks.
    func strings(_ language: String) -> [String: String] {
        (strings["en"] ?? [:]).merging(strings[language] ?? [:]) { _, own in own }
    }
}

/// The pages: the sign-in form, an error, the logout confirmation and "signed out".
enum SignInPage {
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    static let template = String(decoding: PackageResources.sign_in_html, as: UTF8.self)

    private static func page(language: String, title: String, heading: String, content: String) -> String {
        template.replacingOccurrences(of: "{{lang}}", with: escape(language))
            .replacingOccurrences(of: "{{title}}", with: escape(title))
            .replacingOccurrences(of: "{{heading}}", with: escape(heading))
            .replacingOccurrences(of: "{{content}}", with: content)
    }

    /// The sign-in form of `client` for a sealed request; the script runs the rounds.
    static func signIn(strings: [String: String], language: String, client: String, sealed: String, csrf: String, loginHint: String?) -> String {
        let heading = (strings["heading"] ?? "Sign in to {client}").replacingOccurrences(of: "{client}", with: client)
        let json = String(decoding: JSONBody.buffer(strings).readableBytesView, as: UTF8.self)
        let form = """
            <form id="gatehouse-sign-in" method="post" action="/oidc/sign-in" novalidate data-request="\(escape(sealed))" data-csrf="\(escape(csrf))" \
            data-client="\(escape(client))" data-login-hint="\(escape(loginHint ?? ""))" data-strings="\(escape(json))">
            <div id="gatehouse-fields" aria-live="polite"><p class="gatehouse-hint">\(escape(strings["loading"] ?? ""))</p></div>
            <p id="gatehouse-error" role="alert" tabindex="-1"></p>
            <button type="submit" id="gatehouse-submit" hidden>\(escape(strings["submit"] ?? "Sign in"))</button>
            </form>
            <noscript><p>\(escape(strings["noscript"] ?? ""))</p></noscript>
            """
        return page(language: language, title: strings["title"] ?? "Sign in", heading: heading, content: form)
    }

    /// An error the user can act on (or at least understand), with the way back.
    static func error(strings: [String: String], language: String, message: String) -> String {
        page(language: language, title: strings["errorHeading"] ?? "Sign-in problem", heading: strings["errorHeading"] ?? "Sign-in problem",
             content: "<p id=\"gatehouse-error\" role=\"alert\">\(escape(message))</p>\n<p>\(escape(strings["back"] ?? ""))</p>")
    }

    /// "Sign out of every application?" with a button (a form posted to `/oidc/logout` with the CSRF token).
    static func confirmLogout(strings: [String: String], language: String, csrf: String, parameters: [String: String]) -> String {
        var hidden = "<input type=\"hidden\" name=\"csrf\" value=\"\(escape(csrf))\">"
        for name in ["client_id", "post_logout_redirect_uri", "state"] {
            if let value = parameters[name] { hidden += "<input type=\"hidden\" name=\"\(name)\" value=\"\(escape(value))\">" }
        }
        let content = """
            <form id="gatehouse-logout" method="post" action="/oidc/logout">\(hidden)
            <p>\(escape(strings["logoutConfirm"] ?? ""))</p>
            <button type="submit" id="gatehouse-logout-button">\(escape(strings["logoutButton"] ?? "Sign out"))</button>
            </form>
            """
        return page(language: language, title: strings["logoutHeading"] ?? "Sign out", heading: strings["logoutHeading"] ?? "Sign out", content: content)
    }

    static func signedOut(strings: [String: String], language: String) -> String {
        page(language: language, title: strings["signedOutHeading"] ?? "Signed out", heading: strings["signedOutHeading"] ?? "Signed out",
             content: "<p id=\"gatehouse-signed-out\">\(escape(strings["signedOut"] ?? ""))</p>")
    }
}
