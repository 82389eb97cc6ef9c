import Support

/// The page `dev` serves at `/` over plain HTTP on the LAN: what a phone opens first, before it trusts the
/// dev CA (so it cannot be HTTPS yet). The steps, the entitlement lines, and the CA profile's link.
enum LandingPage {
    static let contentType = "text/html; charset=utf-8"

    static func html(hosts: [String]) -> String {
        let entitlements = hosts.map { "applinks:\(escape($0))?mode=developer" }.joined(separator: "<br>")
        let first = escape(hosts.first ?? "dev.example.com")
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>aasa-server dev: set up this device</title>
            <style>body{font:17px/1.45 -apple-system,system-ui,sans-serif;margin:1.2em;max-width:40em}code{word-break:break-all}
            a.button{display:inline-block;padding:.7em 1.1em;background:#0a58ca;color:#fff;border-radius:.5em;text-decoration:none}</style>
            </head><body>
            <h1>Universal links in developer mode</h1>
            <p>This machine serves the associated-domains file for <code>\(hosts.map(escape).joined(separator: ", "))</code>.</p>
            <ol>
            <li>Settings → Privacy &amp; Security → Developer Mode: on (then restart).</li>
            <li>Settings → Developer → Associated Domains Development: on.</li>
            <li>In Xcode, the app's Associated Domains entitlement lists:<br><code>\(entitlements)</code><br>
            Run the Debug build on this device: it fetches the file from this machine, not through Apple's CDN.</li>
            <li>Optional, for Safari and curl on this device: <a class="button" href="\(MobileConfig.path)">Install the dev CA profile</a>,
            then Settings → General → VPN &amp; Device Management → install it, and Settings → General → About →
            Certificate Trust Settings → trust "aasa-server development CA". Developer mode itself needs no trust,
            only a valid certificate (this one is).</li>
            <li>Settings → Developer → Universal Links → Diagnostics: enter <code>https://\(first)/some/path</code>.</li>
            </ol>
            <p>The terminal running <code>aasa-server dev</code> prints a line when this device fetches the file.</p>
            </body></html>

            """
    }

    static func escape(_ text: String) -> String { Markup.escape(text) }
}
