/// The console's files — `console.html`, `console.css`, the scripts and `icon.svg` — kept as they are served in
/// `Console/Assets/` (real `.js` and `.css` files, checked by `scripts/lint-console`: `node --check` and ESLint) and
/// embedded into the binary at build time (SwiftPM's `embedInCode` resources, `PackageResources`), so the single
/// `gatehouse` binary serves the whole console: no file beside it, no CDN.
///
/// The scripts: `console.js` (the core: session, admin API calls, DOM helpers, the router; it starts the console),
/// `console-chart.js` (the dashboard's chart) and the pages, served as one `console-pages.js`: the pages and the
/// Applications, Devices and Users pages, each a file here.
enum ConsoleAssets {
    static let html = text(PackageResources.console_html)
    static let css = text(PackageResources.console_css)
    static let script = text(PackageResources.console_js)
    static let chartScript = text(PackageResources.console_chart_js)
    /// The pages' scripts, in this order, as one served file.
    static let pagesScript = [
        PackageResources.console_pages_js, PackageResources.console_applications_js, PackageResources.console_devices_js,
        PackageResources.console_users_js,
    ].map(text).joined(separator: "\n")
    static let icon = text(PackageResources.icon_svg)

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
