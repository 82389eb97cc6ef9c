import ConsolePages
import FetchRecords
import Foundation
import Testing

/// The console's pages as pure functions: everything from a config or a request is escaped, forms and
/// links carry the search, and the timeline draws what was recorded.
@Suite("Console pages (pure)")
struct ConsolePagesTests {
    static let now = 1_796_150_000_000

    static func status(_ host: String, fetched: Bool = true) -> HostStatus {
        var ledger = FetchLedger(limit: 10)
        ledger.add(VersionRecord(host: host, document: .aasa, version: "aaaa1111bbbb2222", since: now - 7_200_000))
        if fetched {
            ledger.add(
                FetchRecord(
                    time: now - 60_000,
                    host: host,
                    fetcher: .appleCDN,
                    path: "/.well-known/apple-app-site-association",
                    status: 200,
                    bytes: 10,
                    version: "aaaa1111bbbb2222",
                    client: "<b>10.0.0.1</b>",
                    origin: .verified
                )
            )
        }
        return HostStatus(host: host, history: ledger.hosts[host] ?? HostHistory())
    }

    @Test("markup in a search, a host or a client address is text; only the escaped forms appear")
    func escaping() {
        let markup = "<script>alert('x')</script>\"&"
        #expect(HTML.escape(markup) == "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&amp;")
        let listing = HostIndexPage.Listing(rows: [], query: markup, page: 1, hasMore: false, hostCount: 3, generation: 2)
        let index = HostIndexPage.html(listing, now: Self.now)
        #expect(!index.contains("<script>alert"))
        #expect(index.contains("value=\"&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&amp;\""))
        let page = HostPage.html(
            HostPage.Content(
                status: Self.status("shop.example.com"),
                document: "{\"a\":\"</pre><script>\"}",
                assetLinks: nil,
                findings: [],
                match: nil
            ),
            now: Self.now
        )
        #expect(!page.contains("</pre><script>") && page.contains("&lt;/pre&gt;&lt;script&gt;"))
        #expect(page.contains("from &lt;b&gt;10.0.0.1&lt;/b&gt;"), "the client address in the timeline's tooltip")
        #expect(!page.contains("<b>10.0.0.1</b>"))
    }

    @Test("rows show the version, whether Apple has the current one, and pages link with the search kept")
    func listing() {
        let rows = [
            HostIndexPage.Row(host: "shop.example.com", status: Self.status("shop.example.com"), findings: 0, certificateExpiry: nil),
            HostIndexPage.Row(
                host: "new.example.com",
                status: Self.status("new.example.com", fetched: false),
                findings: 2,
                certificateExpiry: 1_797_000_000
            ),
        ]
        let listing = HostIndexPage.Listing(rows: rows, query: "a b", page: 2, hasMore: true, hostCount: 1_000_000, generation: 7)
        let html = HostIndexPage.html(listing, now: Self.now)
        #expect(html.contains("<a href=\"/console/host/shop.example.com\">shop.<wbr>example.<wbr>com</a>"))
        #expect(html.contains("<code>aaaa1111</code>"))
        #expect(html.contains("60 s ago · <span class=\"ok\">current</span>"))
        #expect(html.contains("<span class=\"none\">not fetched</span>"))
        #expect(html.contains("href=\"/console?q=a%20b&amp;page=1\"") && html.contains("href=\"/console?q=a%20b&amp;page=3\""))
        #expect(html.contains("9 days"), "certificate expiry in days")
        // The summary an operator looks for first.
        #expect(html.contains("<strong>1000000</strong> hosts served (config generation 7)"))
        #expect(html.contains("Apple's CDN has the current version for"))
        let dev = HostIndexPage.html(
            HostIndexPage.Listing(
                rows: [
                    HostIndexPage.Row(
                        host: "dev.example.com",
                        status: Self.status("dev.example.com", fetched: false),
                        findings: 0,
                        certificateExpiry: 1_900_000_000,
                        devCertificate: true
                    )
                ],
                query: "",
                page: 1,
                hasMore: false,
                hostCount: 1,
                generation: 1,
                summary: HostIndexPage.Summary(appleCurrent: 0, appleEarlier: 0, certificatesExpiring: 0, devCertificates: 1)
            ),
            now: Self.now
        )
        #expect(dev.contains("dev CA: Apple's CDN rejects it") && !dev.contains("days</td>"), "not a healthy expiry")
        #expect(!dev.contains("<span class=\"ok\">none</span>"), "a dev certificate is a finding")
        #expect(dev.contains("1 from the dev CA, which Apple's CDN rejects"))
        #expect(HTML.query("q=a+b%2Fc&page=2") == ["q": "a b/c", "page": "2"])
    }

    @Test("the frame names only same-origin assets; the policy allows no script")
    func policy() {
        let page = HostPage.html(
            HostPage.Content(
                status: Self.status("shop.example.com"),
                document: nil,
                assetLinks: nil,
                findings: [("warning", "w [r]")],
                match: ("u", "answer")
            ),
            now: Self.now
        )
        #expect(page.contains("<link rel=\"stylesheet\" href=\"/console/style.css\">"))
        #expect(!page.contains("<script"))
        #expect(!page.contains("src=\"http") && !page.contains("href=\"http"), "no outside asset or link")
        #expect(
            ConsolePage.contentSecurityPolicy.contains("default-src 'none'") && !ConsolePage.contentSecurityPolicy.contains("script-src")
        )
        #expect(page.components(separatedBy: "<circle").count == 2, "one dot for the one fetch")
        #expect(page.contains("<li class=\"warning\">warning: w [r]</li>") && page.contains("<p class=\"match\">answer</p>"))
    }
}
