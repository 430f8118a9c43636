// A web asset embedded in Swift source: the console's stylesheet, served at `/console/console.css` by
// ConsoleRoutes so the single `gatehouse` binary serves the whole console (no file on disk, no CDN).

/// The console's stylesheet: a light, high-contrast layout that turns tables into stacked cards on a phone.
enum ConsoleStyle {
    static let css = #"""
    :root {
      --ink: #1b1f24; --muted: #5a6270; --line: #d5d9e0; --paper: #ffffff; --back: #f3f5f8;
      --accent: #0b57d0; --accent-ink: #ffffff; --danger: #b3261e; --ok: #146c2e; --warn: #8a5300;
      --flows: #0b57d0; --failures: #b86e00; --blocks: #b3261e; --focus: #ffbf47;
      font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
      color: var(--ink); background: var(--back); line-height: 1.45;
    }
    * { box-sizing: border-box; }
    body { margin: 0; min-width: 0; }
    code, pre, textarea, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.92em; }
    a { color: var(--accent); }
    :focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; box-shadow: 0 0 0 5px var(--ink); border-radius: 3px; }
    [hidden] { display: none !important; }
    .skip { position: absolute; left: -999px; top: 0; background: var(--paper); padding: 0.5rem 1rem; z-index: 10; }
    .skip:focus { left: 0.5rem; top: 0.5rem; }
    .muted { color: var(--muted); }
    .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }

    .top { display: flex; align-items: center; justify-content: space-between; gap: 1rem; flex-wrap: wrap;
           padding: 0.6rem 1.25rem; background: #15202b; color: #fff; }
    .brand { font-weight: 700; font-size: 1.1rem; }
    .brand .muted { color: #b9c3cf; font-weight: 400; }
    .logo { width: 1.3rem; height: 1.3rem; vertical-align: -0.25rem; margin-right: 0.2rem; }
    .who { display: flex; align-items: center; gap: 0.75rem; flex-wrap: wrap; font-size: 0.95rem; }
    .who .button.ghost { color: #fff; border-color: #6b7785; }

    nav { background: var(--paper); border-bottom: 1px solid var(--line); }
    nav ul { list-style: none; margin: 0 auto; padding: 0 1rem; display: flex; flex-wrap: wrap; gap: 0.25rem; max-width: 75rem; }
    nav a { display: block; padding: 0.7rem 0.8rem; text-decoration: none; color: var(--ink); border-bottom: 3px solid transparent; }
    nav a:hover { background: var(--back); }
    nav a[aria-current="page"] { border-bottom-color: var(--accent); font-weight: 600; color: var(--accent); }

    main { max-width: 75rem; margin: 0 auto; padding: 1.25rem; outline: none; }
    h1 { font-size: 1.55rem; margin: 0.25rem 0 1rem; outline: none; overflow-wrap: anywhere; }
    h2 { font-size: 1.15rem; margin: 1.5rem 0 0.6rem; }
    .card { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.1rem; margin-bottom: 1rem; }
    .card > h2:first-child, .card > h3:first-child { margin-top: 0; }
    details.app > summary { cursor: pointer; padding: 0.15rem 0; font-size: 1.05rem; overflow-wrap: anywhere; }
    details.app[open] > summary { margin-bottom: 0.75rem; }
    details.app .table-wrap { margin-top: 0.75rem; }
    .notice, .error { border-radius: 8px; padding: 0.75rem 1rem; margin-bottom: 1rem; overflow-wrap: anywhere; }
    .notice { background: #e6f4ea; border: 1px solid #a8d5b5; color: var(--ok); }
    .error { background: #fce8e6; border: 1px solid #f1aea8; color: var(--danger); }
    .error strong, .notice strong { margin-right: 0.4rem; }
    .empty { color: var(--muted); text-align: center; padding: 1.5rem 1rem; border: 1px dashed var(--line); border-radius: 8px; background: var(--paper); }

    .signin { max-width: 28rem; margin: 2rem auto; }
    .form { display: grid; gap: 0.45rem; }
    .form label { font-weight: 600; }
    .form .inline { font-weight: 400; display: flex; gap: 0.5rem; align-items: baseline; }
    fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 0.4rem 0; padding: 0.5rem 0.75rem; }
    legend { font-weight: 600; padding: 0 0.25rem; }
    input, select, textarea { font: inherit; color: inherit; padding: 0.5rem 0.6rem; border: 1px solid #8a93a0; border-radius: 6px; background: var(--paper); min-width: 0; }
    input[type=radio] { padding: 0; }
    textarea { width: 100%; min-height: 24rem; resize: vertical; line-height: 1.4; tab-size: 2; white-space: pre; overflow: auto; }
    .button { font: inherit; cursor: pointer; border-radius: 6px; padding: 0.5rem 0.95rem; border: 1px solid #8a93a0;
              background: var(--paper); color: var(--ink); min-height: 2.5rem; }
    .button:hover { background: var(--back); }
    .button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-ink); }
    .button.primary:hover { background: #0842a0; }
    .button.danger { color: var(--danger); border-color: var(--danger); }
    .button.danger.confirm { background: var(--danger); color: #fff; }
    .button.ghost { background: transparent; }
    .button:disabled { opacity: 0.55; cursor: not-allowed; }
    .actions { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin: 0.75rem 0; }

    .search { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)) auto; gap: 0.75rem; align-items: end; }
    .search .field { display: grid; gap: 0.3rem; }
    .search label { font-weight: 600; font-size: 0.92rem; }
    .search .actions { margin: 0; }

    .stats { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 0.75rem; margin-bottom: 1rem; }
    .stat { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: 0.75rem 1rem; }
    .stat .value { font-size: 1.7rem; font-weight: 700; display: block; }
    .stat .label { color: var(--muted); font-size: 0.9rem; }
    .stat.flows .value { color: var(--flows); } .stat.failures .value { color: var(--failures); } .stat.blocks .value { color: var(--blocks); }

    .chart-head { display: flex; justify-content: space-between; align-items: center; gap: 0.75rem; flex-wrap: wrap; }
    .chart-head h2 { margin: 0; }
    .chart { max-width: 100%; height: auto; display: block; margin-top: 0.5rem; }
    .chart .grid { stroke: #e3e6eb; stroke-width: 1; }
    .chart .axis { fill: var(--muted); font-size: 12px; }
    .chart .baseline { stroke: #8a93a0; stroke-width: 1; }
    .chart .bar.flows { fill: var(--flows); } .chart .bar.failures { fill: var(--failures); } .chart .bar.blocks { fill: var(--blocks); }
    .legend { display: flex; flex-wrap: wrap; gap: 1rem; list-style: none; padding: 0; margin: 0.5rem 0 0; font-size: 0.92rem; }
    .legend .swatch { display: inline-block; width: 0.9rem; height: 0.9rem; border-radius: 2px; vertical-align: -0.1rem; margin-right: 0.4rem; }
    .legend .flows { background: var(--flows); } .legend .failures { background: var(--failures); } .legend .blocks { background: var(--blocks); }

    .table-wrap { overflow-x: auto; background: var(--paper); border: 1px solid var(--line); border-radius: 8px; }
    table { border-collapse: collapse; width: 100%; font-size: 0.95rem; }
    caption { text-align: left; padding: 0.6rem 0.8rem; color: var(--muted); font-size: 0.9rem; }
    th, td { text-align: left; padding: 0.55rem 0.8rem; border-top: 1px solid var(--line); vertical-align: middle; }
    th { background: #f8f9fb; font-weight: 600; white-space: nowrap; }
    td { overflow-wrap: anywhere; }
    td code { overflow-wrap: normal; white-space: nowrap; }
    td.id { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.88em; }
    .pager { display: flex; gap: 0.5rem; justify-content: space-between; align-items: center; flex-wrap: wrap; margin-top: 0.75rem; }

    .badge { display: inline-block; padding: 0.1rem 0.55rem; border-radius: 999px; font-size: 0.85rem; font-weight: 600; border: 1px solid; }
    .badge.blocked, .badge.locked, .badge.retired { color: var(--danger); border-color: #f1aea8; background: #fce8e6; }
    .badge.success, .badge.active, .badge.current { color: var(--ok); border-color: #a8d5b5; background: #e6f4ea; }
    .badge.attempting { color: var(--warn); border-color: #f3cf8f; background: #fef3e0; }
    .badge.expired, .badge.valid { color: var(--muted); border-color: var(--line); background: var(--back); }

    dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.35rem 1rem; margin: 0; }
    dl.facts dt { color: var(--muted); }
    dl.facts dd { margin: 0; overflow-wrap: anywhere; }

    .editor-grid { display: grid; grid-template-columns: minmax(0, 1fr); gap: 1rem; }
    .problems { margin: 0.5rem 0 0; padding-left: 1.25rem; }
    .problems li { margin: 0.25rem 0; }
    .result.valid { color: var(--ok); font-weight: 600; }

    @media (max-width: 700px) {
      main { padding: 0.75rem; }
      .top { padding: 0.5rem 0.75rem; }
      nav ul { padding: 0 0.25rem; gap: 0; }
      nav a { padding: 0.55rem 0.6rem; font-size: 0.95rem; }
      h1 { font-size: 1.3rem; }
      .search { grid-template-columns: minmax(0, 1fr); }
      .stats { grid-template-columns: repeat(2, minmax(0, 1fr)); }
      .stat .value { font-size: 1.4rem; }
      .brand .muted { display: none; }
      .table-wrap { border: none; background: transparent; overflow: visible; }
      table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: 100%; }
      table.cards thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
      table.cards caption { display: block; padding: 0 0 0.5rem; }
      table.cards tr { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; margin-bottom: 0.6rem; padding: 0.35rem 0; }
      table.cards td { border: none; padding: 0.3rem 0.8rem; display: grid; grid-template-columns: 8.5rem minmax(0, 1fr); gap: 0.5rem; }
      table.cards td::before { content: attr(data-label); color: var(--muted); font-weight: 600; font-size: 0.88rem; }
      dl.facts { grid-template-columns: minmax(0, 1fr); gap: 0.1rem; }
      dl.facts dd { margin-bottom: 0.45rem; }
      textarea { min-height: 18rem; font-size: 0.85rem; }
    }
    """#
}
