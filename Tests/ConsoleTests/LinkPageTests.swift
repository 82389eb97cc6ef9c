import Testing

@testable import ConsolePages

/// The console's page of a stored link: the chart's bars stand for the numbers, the table gives them
/// exactly (HEAD apart), and what the link holds is shown as text, never run.
@Suite("Console: a stored link's page")
struct LinkPageTests {
    static let days = ["2026-12-01", "2026-12-02", "2026-12-03"]

    static func content(_ clicks: [(day: String, visitor: String, outcome: String, head: Bool, count: Int)]) -> LinkPage.Content {
        LinkPage.Content(
            shortLink: "https://go.example.com/spring",
            state: "active",
            domainDisabled: false,
            parameters: [(name: "link", value: "https://example.com/<script>alert(1)</script>"), (name: "st", value: "Tom & Jerry")],
            history: [(at: 1_764_547_200, change: "created")],
            days: days,
            clicks: clicks
        )
    }

    @Test("Bars stack the classes to each day's height on a 1-2-5 scale; the table totals per class with HEAD apart")
    func chartAndTable() {
        let html = LinkPage.html(
            Self.content([
                ("2026-12-01", "iphone", "landing", false, 30), ("2026-12-01", "desktop", "web", false, 10),
                ("2026-12-03", "android", "store", false, 20), ("2026-12-03", "desktop", "web", true, 5),
            ])
        )
        // Highest day 40 → axis 50; plot 180 px tall: 30 clicks are 108 px, 10 are 36, 20 are 72.
        #expect(html.contains(#"<text x="36" y="18" font-size="10" text-anchor="end" fill="currentColor">50</text>"#))
        #expect(html.contains(#"<rect class="iphone" x="#) && html.contains(##"height="108" fill="#0a58ca"/>"##), "\(html)")
        #expect(html.contains(##"height="36" fill="#b35900"/>"##) && html.contains(##"height="72" fill="#1a7f37"/>"##))
        #expect(html.contains("<title>2026-12-01: 40 clicks (iPhone 30, desktop 10)</title>"))
        #expect(html.contains("<title>2026-12-02: 0 clicks</title>"), "a day without clicks has its slot")
        #expect(html.contains("60 clicks in the last 3 days"))
        #expect(
            html.contains(
                "<tr class=\"total\"><td>total</td><td>30</td><td>0</td><td>20</td><td>10</td><td>0</td><td>0</td><td>5</td></tr>"
            )
        )
        #expect(!html.contains("<tr><td>2026-12-02</td>"), "the table lists the days that had clicks")
    }

    @Test("What the link holds is escaped; a switched-off domain is said; no script and no inline style (the console's CSP)")
    func escapingAndState() {
        var content = Self.content([])
        content.domainDisabled = true
        let html = LinkPage.html(content)
        #expect(html.contains("https://example.com/&lt;script&gt;alert(1)&lt;/script&gt;") && html.contains("Tom &amp; Jerry"))
        #expect(!html.contains("<script") && !html.contains("style=") && !html.contains("<style"))
        #expect(html.contains("its domain is switched off"))
        #expect(html.contains("2025-12-01T00:00:00Z created"))
        #expect(html.contains("0 clicks in the last 3 days") && html.contains(">1</text>"), "an empty chart still has an axis")
    }

    @Test("The axis' top is the first of 1, 2, 5 × 10ⁿ at or above the highest day")
    func niceCeiling() {
        #expect([1, 2, 3, 5, 6, 10, 11, 40, 99, 101, 2_001].map(LinkPage.niceCeiling) == [1, 2, 5, 5, 10, 10, 20, 50, 100, 200, 5_000])
    }
}
