// A web asset embedded in Swift source: the console's icon (SVG), served at `/console/icon.svg` by ConsoleRoutes
// so the single `gatehouse` binary serves the whole console (no file on disk, no CDN).

/// The console's icon: a shield, for the browser's tab.
enum ConsoleIcon {
    static let svg = #"""
    <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 2 4 6v9c0 7.5 5.1 13.2 12 15 6.9-1.8 12-7.5 12-15V6z" fill="#15202b"/><path d="M16 6.5 8 9.2v5.9c0 5 3.3 9 8 10.4 4.7-1.4 8-5.4 8-10.4V9.2z" fill="#8ab4f8"/></svg>
    """#
}
