import Support
import Testing

@testable import AASA
@testable import Links

/// The link pages: markup in every field is shown, never parsed; the tags previews read; a strict CSP.
@Suite("Link pages: escaping, tags and the content security policy")
struct LinkPagesTests {
    static let hostile = #"<script>alert("x")</script>&'"#

    static func content(_ kind: LinkPageContent.Kind) -> LinkPageContent {
        LinkPageContent(
            kind: kind,
            linkURL: "https://go.example.com/p/1?a=\"><script>",
            deepLink: "https://example.com/p/1?x=\"><b>",
            title: hostile,
            description: hostile,
            image: "https://img.example.com/p.png?\"><i>",
            app: LinkApp(
                name: "shop",
                appleID: "ABCDE12345.com.example.shop",
                appStoreID: "123",
                title: hostile,
                icon: "https://cdn.example.com/i.png",
                androidPackage: "com.example.shop"
            ),
            smartBanner: true,
            web: "https://shop.example.com/\"><u>",
            buttons: [.init(label: hostile, url: "https://apps.apple.com/app/id123?\"><s>", primary: true)]
        )
    }

    @Test("A stored link's App Store button copies a claim: its one script, named by hash in the policy, and a note saying so")
    func claimButton() throws {
        var content = Self.content(.landing)
        #expect(!LinkPages.render(content).contains("<script") && !LinkPages.contentSecurityPolicy(for: content).contains("script-src"))
        content.claimPath = "/_/c/spring"
        let html = LinkPages.render(content)
        #expect(html.contains(#"data-claim="/_/c/spring">"#) && html.contains("copies a one-time link to your clipboard"))
        let script = try #require(
            html.firstRange(of: "<script>").flatMap { start in
                html[start.upperBound...].firstRange(of: "</script>").map { String(html[start.upperBound..<$0.lowerBound]) }
            }
        )
        let hash = "sha256-" + Base64.encode(SHA256.digest(Array(script.utf8)))
        let policy = LinkPages.contentSecurityPolicy(for: content)
        #expect(policy.contains("script-src '\(hash)'; connect-src 'self';") && hash == LinkPages.claimScriptHash, "\(policy)")
        #expect(html.ranges(of: "<script").count == 1, "one script, the claim's")
        // No App Store button (a fallback, an Android page): no script, no note.
        content.buttons = [.init(label: "Get it on Google Play", url: "https://play.google.com/store/apps/details?id=x", primary: true)]
        #expect(!LinkPages.render(content).contains("<script") && !LinkPages.contentSecurityPolicy(for: content).contains("script-src"))
    }

    @Test("Every value from the config or the request is escaped, on every kind of page")
    func escaping() {
        for kind: LinkPageContent.Kind in [.landing, .preview, .inAppBrowser(Self.hostile)] {
            let html = LinkPages.render(Self.content(kind))
            #expect(!html.contains("<script"), "\(kind)")
            for tag in ["<b>", "<i>", "<u>", "<s>"] { #expect(!html.contains(tag), "\(tag) in \(kind)") }
            #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"))
        }
    }

    @Test("Preview tags: Open Graph, X's card, Meta's App Links, the Smart App Banner")
    func tags() {
        var content = Self.content(.preview)
        content.title = "Spring sale"
        let html = LinkPages.render(content)
        for expected in [
            #"<meta property="og:title" content="Spring sale">"#, #"<meta name="twitter:card" content="summary_large_image">"#,
            #"<meta property="al:ios:app_store_id" content="123">"#, #"<meta property="al:android:package" content="com.example.shop">"#,
            #"<meta name="apple-itunes-app" content="app-id=123, app-argument=https://example.com/p/1?x=&quot;&gt;&lt;b&gt;">"#,
        ] {
            #expect(html.contains(expected), "\(expected)")
        }
    }

    @Test("CSP: no script, styles from the site itself, images only from the hosts the page shows")
    func policy() {
        let policy = LinkPages.contentSecurityPolicy(for: Self.content(.landing))
        #expect(
            policy
                == "default-src 'none'; style-src 'self'; img-src https://cdn.example.com https://img.example.com; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
        var bare = Self.content(.landing)
        bare.image = nil
        bare.app = nil
        #expect(LinkPages.contentSecurityPolicy(for: bare).contains("img-src 'none'"))
    }
}
