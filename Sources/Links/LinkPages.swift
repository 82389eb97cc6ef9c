public import AASA
import Support

/// The HTML of link pages: a landing page that looks like the product's, a preview page for link
/// fetchers, a page for in-app browsers. Pure functions of their content; every value is escaped here.
public enum LinkPages {
    /// No script at all; styles only from the site's own reserved path; images only from the hosts the
    /// page shows images of.
    /// A site's own template adds the hashes of its `<style>` elements and the image origins the site lists.
    public static func contentSecurityPolicy(
        for content: LinkPageContent,
        template: LandingPageTemplate? = nil,
        imageOrigins: [String] = []
    ) -> String {
        let custom = template != nil && content.kind != .preview
        let shown = [content.app?.icon, content.image].compactMap { $0.flatMap(LinkTemplate.origin) }
        let origins = Set(shown + (custom ? imageOrigins : [])).sorted()
        let images = origins.isEmpty ? "'none'" : origins.joined(separator: " ")
        let styles = (["'self'"] + (custom ? template?.styleHashes ?? [] : [])).joined(separator: " ")
        // The claim button's script, by its hash, and the one request it makes: nothing else may run.
        let script = !content.copiesClaim ? "" : "script-src '\(claimScriptHash)'; connect-src 'self'; "
        return "default-src 'none'; \(script)style-src \(styles); img-src \(images); base-uri 'none'; form-action 'none'; "
            + "frame-ancestors 'none'"
    }

    /// The only script a link page ever has, on a stored link's page with an App Store button: on the tap,
    /// it asks the server for a one-time claim URL, writes it to the clipboard (inside the tap, as the
    /// Clipboard API requires: the item is a promise of the text), then opens the store. Without the
    /// Clipboard API, or if anything fails, the button is a plain link to the store.
    public static let claimScript = """
        document.querySelectorAll("a[data-claim]").forEach(function (button) {
          button.addEventListener("click", function (event) {
            if (!navigator.clipboard || !window.ClipboardItem) return;
            event.preventDefault();
            var text = fetch(button.dataset.claim, {method: "POST"}).then(function (response) {
              if (!response.ok) throw new Error("claim " + response.status);
              return response.text();
            }).then(function (url) { return new Blob([url], {type: "text/plain"}); });
            navigator.clipboard.write([new ClipboardItem({"text/plain": text})])
              .catch(function () {})
              .finally(function () { window.location.href = button.href; });
          });
        });
        """

    /// `'sha256-…'`, the script's hash source for Content-Security-Policy.
    public static let claimScriptHash = "sha256-" + Base64.encode(SHA256.digest(Array(claimScript.utf8)))

    /// A site's template, when it has one, replaces the built-in landing and in-app pages; link previews
    /// keep the built-in page (crawlers read only its tags).
    public static func render(_ content: LinkPageContent, template: LandingPageTemplate? = nil) -> String {
        switch content.kind {
        case .preview: return preview(content)
        case .landing, .inAppBrowser:
            guard let template else { return landing(content) }
            return fill(template, content)
        }
    }

    static func fill(_ template: LandingPageTemplate, _ content: LinkPageContent) -> String {
        var html = ""
        for part in template.parts {
            switch part {
            case .text(let text): html += text
            case .value(let placeholder):
                switch placeholder {
                case .head: html += "<meta name=\"referrer\" content=\"no-referrer\">\n" + metaTags(content)
                case .title: html += Markup.escape(content.title)
                case .description: html += Markup.escape(content.description ?? "")
                case .image: html += Markup.escape(content.image ?? "")
                case .appName: html += Markup.escape(content.app?.title ?? "")
                case .appIcon: html += Markup.escape(content.app?.icon ?? "")
                case .link: html += Markup.escape(content.linkURL)
                case .deepLink: html += Markup.escape(content.deepLink)
                case .web: html += Markup.escape(content.web ?? "")
                case .note: html += Markup.escape(inAppNote(content) ?? "")
                case .buttons: html += buttons(content)
                }
            }
        }
        return html
    }

    static func inAppNote(_ content: LinkPageContent) -> String? {
        guard case .inAppBrowser(let name) = content.kind else { return nil }
        return "This link opens best in the app or in your browser. \(name)'s browser may not open apps or the store: "
            + "if a button does nothing, choose “Open in browser” from its menu."
    }

    static func buttons(_ content: LinkPageContent) -> String {
        guard !content.buttons.isEmpty else { return "" }
        var html = "<nav class=\"actions\">\n"
        var claims = false
        for button in content.buttons {
            let style = button.primary ? "button primary" : "button"
            var claim = ""
            if let path = content.claimPath, button.url.hasPrefix(StoreLinks.appStorePrefix) {
                claim = " data-claim=\"\(Markup.escape(path))\""
                claims = true
            }
            html += "<a class=\"\(style)\" href=\"\(Markup.escape(button.url))\"\(claim)>\(Markup.escape(button.label))</a>\n"
        }
        html += "</nav>\n"
        guard claims else { return html }
        // Said plainly, as the clipboard is the person's: what the button copies and why.
        let app = content.app?.title ?? "the app"
        html += "<p class=\"note\">The App Store button also copies a one-time link to your clipboard, so that \(Markup.escape(app)) "
        html += "can open this page's link when you first open it. Nothing else is copied or kept.</p>\n"
        return html + "<script>\(claimScript)</script>\n"
    }

    /// The tags link previews read (Open Graph, X's card, Meta's App Links), and a plain body.
    static func metaTags(_ content: LinkPageContent) -> String {
        var tags: [(String, String, String)] = [
            ("property", "og:title", content.title), ("property", "og:url", content.linkURL), ("property", "og:type", "website"),
        ]
        if let description = content.description { tags.append(("property", "og:description", description)) }
        if let image = content.image { tags.append(("property", "og:image", image)) }
        tags.append(("name", "twitter:card", content.image == nil ? "summary" : "summary_large_image"))
        tags.append(("name", "twitter:title", content.title))
        if let description = content.description { tags.append(("name", "twitter:description", description)) }
        if let image = content.image { tags.append(("name", "twitter:image", image)) }
        if let app = content.app {
            if app.appleID != nil || app.appStoreID != nil {
                tags.append(("property", "al:ios:url", content.deepLink))
                tags.append(("property", "al:ios:app_name", app.title))
                if let id = app.appStoreID { tags.append(("property", "al:ios:app_store_id", id)) }
            }
            if let package = app.androidPackage {
                tags.append(("property", "al:android:url", content.deepLink))
                tags.append(("property", "al:android:package", package))
                tags.append(("property", "al:android:app_name", app.title))
            }
        }
        if let web = content.web {
            tags.append(("property", "al:web:url", web))
        } else {
            tags.append(("property", "al:web:should_fallback", "false"))
        }
        var html = ""
        for (attribute, name, value) in tags {
            html += "<meta \(attribute)=\"\(name)\" content=\"\(Markup.escape(value))\">\n"
        }
        if content.smartBanner, let id = content.app?.appStoreID {
            html += "<meta name=\"apple-itunes-app\" content=\"app-id=\(id), app-argument=\(Markup.escape(content.deepLink))\">\n"
        }
        return html
    }

    static func preview(_ content: LinkPageContent) -> String {
        var body = "<main>\n<h1>\(Markup.escape(content.title))</h1>\n"
        if let description = content.description { body += "<p>\(Markup.escape(description))</p>\n" }
        return document(title: content.title, head: metaTags(content), body: body + "</main>\n")
    }

    /// Every page's frame: the stylesheet from the reserved path, no referrer sent on.
    static func document(title: String, head: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <meta name="referrer" content="no-referrer">
        <title>\(Markup.escape(title))</title>
        \(head)<link rel="stylesheet" href="\(ReservedPaths.stylesheet)">
        </head>
        <body>
        \(body)</body>
        </html>

        """
    }

    static func landing(_ content: LinkPageContent) -> String {
        var body = "<main class=\"card\">\n"
        if let icon = content.app?.icon {
            body += "<img class=\"icon\" src=\"\(Markup.escape(icon))\" alt=\"\" width=\"96\" height=\"96\">\n"
        }
        if let app = content.app { body += "<p class=\"app\">\(Markup.escape(app.title))</p>\n" }
        body += "<h1>\(Markup.escape(content.title))</h1>\n"
        if let description = content.description { body += "<p class=\"description\">\(Markup.escape(description))</p>\n" }
        if let image = content.image {
            body += "<img class=\"preview\" src=\"\(Markup.escape(image))\" alt=\"\">\n"
        }
        if let note = inAppNote(content) { body += "<p class=\"note\">\(Markup.escape(note))</p>\n" }
        body += buttons(content)
        return document(title: content.title, head: metaTags(content), body: body + "</main>\n")
    }

    static let noIndex = "<meta name=\"robots\" content=\"noindex\">\n"

    /// A request the server will not route (an FDL long link's bad parameter): which parameter and why.
    public static func refusal(parameter: String, reason: String) -> String {
        let body = """
            <main class="card">
            <h1>This link is not valid</h1>
            <p class="description"><code>\(Markup.escape(parameter))</code> \(Markup.escape(reason)).</p>
            </main>

            """
        return document(title: "This link is not valid", head: noIndex, body: body)
    }

    /// A short link switched off on purpose (410 Gone): it existed, and it says so.
    public static func gone() -> String {
        let body = """
            <main class="card">
            <h1>This link has been turned off</h1>
            <p class="description">Whoever shared it switched it off. There is nothing to open here any more.</p>
            </main>

            """
        return document(title: "This link has been turned off", head: noIndex, body: body)
    }

    /// FDL's debug mode: the link's flow for every kind of visitor.
    public static func flow(link: String, rows: [(name: String, decision: LinkDecision)]) -> String {
        var body = "<main class=\"card flow\">\n<h1>Where this link sends each visitor</h1>\n"
        body += "<p class=\"description\">\(Markup.escape(link))</p>\n<table>\n"
        for row in rows {
            body += "<tr><th>\(Markup.escape(row.name))</th><td>\(Markup.escape(LinkFlow.describe(row.decision)))</td></tr>\n"
        }
        body += "</table>\n<p class=\"note\">With the app installed, the app opens before this server sees the request.</p>\n</main>\n"
        return document(title: "Link flow", head: noIndex, body: body)
    }

    /// Served at ``ReservedPaths/stylesheet`` on every link site: one card, fits a 390 px screen, light and dark.
    public static let stylesheet = """
        :root { color-scheme: light dark; --bg: #f5f5f7; --card: #ffffff; --text: #1d1d1f; --muted: #6e6e73; --accent: #0071e3; --line: #d2d2d7; }
        @media (prefers-color-scheme: dark) { :root { --bg: #000000; --card: #1c1c1e; --text: #f5f5f7; --muted: #a1a1a6; --accent: #2997ff; --line: #38383a; } }
        * { box-sizing: border-box; }
        body { margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center; background: var(--bg); color: var(--text);
          font: 17px/1.45 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; padding: 16px; }
        main { width: 100%; max-width: 420px; text-align: center; }
        .card { background: var(--card); border-radius: 20px; padding: 28px 20px; box-shadow: 0 4px 24px rgba(0,0,0,.08); }
        .icon { width: 96px; height: 96px; border-radius: 22px; border: 1px solid var(--line); }
        .app { margin: 12px 0 0; color: var(--muted); font-size: 15px; }
        h1 { font-size: 24px; line-height: 1.25; margin: 8px 0; overflow-wrap: anywhere; }
        .description { color: var(--muted); margin: 0 0 12px; overflow-wrap: anywhere; }
        .preview { width: 100%; height: auto; border-radius: 12px; margin: 8px 0; }
        .note { font-size: 15px; color: var(--muted); }
        .actions { display: flex; flex-direction: column; gap: 10px; margin-top: 16px; }
        .button { display: block; padding: 14px 16px; border-radius: 12px; text-decoration: none; font-weight: 600;
          border: 1px solid var(--line); color: var(--accent); }
        .button.primary { background: var(--accent); border-color: var(--accent); color: #ffffff; }
        .flow { max-width: 720px; text-align: left; }
        table { border-collapse: collapse; width: 100%; font-size: 15px; }
        th, td { border-top: 1px solid var(--line); padding: 8px 6px; vertical-align: top; text-align: left; overflow-wrap: anywhere; }

        """
}
