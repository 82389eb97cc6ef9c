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
