/// The frame every console page shares: one stylesheet from the same origin (the Content-Security-Policy
/// allows nothing else: no script at all, no outside asset), a viewport for phones.
public enum ConsolePage {
    /// Sent with every console response.
    public static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    public static let stylesheetPath = "/console/style.css"
    /// Named by every page, so a browser does not ask for /favicon.ico (a 404 in its console).
    public static let iconPath = "/console/icon.svg"
    public static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#0a58ca"/>\
        <path d="M4 11l4-7 4 7z" fill="#fff"/></svg>
        """

    static func frame(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTML.escape(title)) · aasa-server</title>
        <link rel="stylesheet" href="\(stylesheetPath)">
        <link rel="icon" href="\(iconPath)" type="image/svg+xml">
        </head><body>
        <header><a href="/console">aasa-server console</a></header>
        <main>
        \(body)
        </main>
        </body></html>

        """
    }

    public static let stylesheet = """
        :root{color-scheme:light dark;--ok:#1a7f37;--stale:#b35900;--none:#6e7781;--line:#d0d7de}
        body{font:15px/1.45 -apple-system,system-ui,"Segoe UI",sans-serif;margin:0}
        header{padding:.6em 1em;border-bottom:1px solid var(--line)}header a{font-weight:600;text-decoration:none;color:inherit}
        main{padding:1em;max-width:70em;margin:auto}
        table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35em .5em;border-bottom:1px solid var(--line);vertical-align:top}
        th{font-weight:600;font-size:.85em;text-transform:uppercase;letter-spacing:.03em}
        td.host{overflow-wrap:normal;word-break:normal}
        h1{font-size:clamp(1.3em,6vw,2em);overflow-wrap:anywhere}p.match,ul.findings li{overflow-wrap:anywhere}
        ul.summary{list-style:none;padding:0;margin:.5em 0 1em}ul.summary li{margin:.15em 0}
        div.timeline{overflow-x:auto}div.timeline svg.timeline{min-width:720px}
        ul.legend,ol.versions{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3em 1.2em;font-size:.9em}
        .dot,.band{display:inline-block;vertical-align:middle;margin-right:.35em}
        .dot{width:.7em;height:.7em;border-radius:50%}.dot.current{background:#1a7f37}.dot.earlier{background:#b35900}
        .dot.failed{background:#cf222e}.band{width:1.4em;height:.7em;opacity:.35}.band-a{background:#0a58ca}.band-b{background:#6f42c1}
        .ok{color:var(--ok)}.stale{color:var(--stale)}.none{color:var(--none)}
        form.search{display:flex;gap:.5em;margin:.5em 0 1em}form.search input[type=search]{flex:1;font:inherit;padding:.4em}
        input,button{font:inherit}button{padding:.4em .9em}
        pre{overflow:auto;background:rgba(127,127,127,.12);padding:.8em;border-radius:.4em;max-height:30em}
        nav.pages{display:flex;justify-content:space-between;margin:1em 0}
        svg.timeline{width:100%;height:auto;max-width:60em}
        ul.findings li{margin:.2em 0}.error{color:#cf222e}.warning{color:var(--stale)}
        form.link label{display:block;margin:.7em 0}form.link small{display:block;color:var(--none);font-size:.85em}
        form.link input:not([type=checkbox]),form.link select{display:block;box-sizing:border-box;width:100%;max-width:40em;padding:.35em}
        form.link .invalid{outline:2px solid #cf222e}
        @media (max-width:40em){main{padding:.5em}div.table{overflow-x:auto}th.optional.wide,td.optional.wide{display:none}
        th,td{padding:.3em .35em;font-size:.92em}}
        """
}
