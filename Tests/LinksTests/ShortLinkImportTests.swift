import AASA
import Links
import Testing

/// What an import would store: Takeout rows and exported JSON lines checked as new links are, each record
/// that cannot be imported reported with its line and why.
@Suite("Short-link imports: Takeout's CSV and JSON lines, checked before anything is written")
struct ShortLinkImportTests {
    static let config = ShortLinkAPITests.config

    /// A Takeout CSV line: the short link, the deep link, the other columns by code.
    static func line(_ shortLink: String, _ values: [String: String]) -> String {
        TakeoutCSV.columns.map { column in column == "shortLink" ? shortLink : values[column] ?? "" }.joined(separator: ",")
    }

    @Test(
        "Takeout: each short link's path on the domain, its creation time kept; archived, off-list, deep paths and foreign domains skipped"
    )
    func takeout() throws {
        let csv = [
            ShortLinkSourcesTests.header,
            Self.line(
                "https://go.example.com/sale",
                ["link": "https://example.com/sale", "st": "Sale", "created": "2024-03-01T10:00:00Z"]
            ),
            Self.line("https://go.example.com/old", ["link": "https://example.com/old", "archived": "true"]),
            Self.line("https://go.example.com/bad", ["link": "https://evil.example/x"]),
            Self.line("https://go.example.com/a/b", ["link": "https://example.com/x"]),
            Self.line("https://example.page.link/xyz", ["link": "https://example.com/page"]),
            Self.line("https://go.example.com/_hidden", ["link": "https://example.com/x"]),
            "https://go.example.com/short,row",
        ].joined(separator: "\n")
        let result = try TakeoutCSV.read(Array(csv.utf8)).get()
        let onOwnHosts = ShortLinkImport.takeout(result, domain: nil, config: Self.config, now: 99)
        #expect(onOwnHosts.candidates.map(\.link.shortLink) == ["https://go.example.com/sale"])
        #expect(onOwnHosts.candidates.first?.link.created == 1_709_287_200 && onOwnHosts.candidates.first?.line == 2)
        #expect(onOwnHosts.skipped.map(\.line).sorted() == [3, 4, 5, 6, 7, 8])
        let reasons = Dictionary(uniqueKeysWithValues: onOwnHosts.skipped.map { ($0.line, $0.reason) })
        #expect(reasons[3] == "archived in Firebase")
        #expect(reasons[4] == "link points at evil.example, which this site's links.allow does not list")
        #expect(reasons[5]?.contains("one-segment path") == true)
        #expect(reasons[6] == "example.page.link is not a link domain of the config")
        #expect(reasons[7]?.contains("starts with '_'") == true)
        #expect(reasons[8] == "has 2 fields; the header has 29")
        // With --domain, a page.link link moves to the team's own domain, on the same path.
        let moved = ShortLinkImport.takeout(result, domain: "go.example.com", config: Self.config, now: 99)
        #expect(moved.candidates.map(\.link.shortLink) == ["https://go.example.com/sale", "https://go.example.com/xyz"])
        #expect(moved.candidates.last?.link.created == 99, "no creation time: now")
    }

    @Test("JSON lines: exported links read back with their state and time; broken, deleted and refused lines named")
    func jsonLines() {
        let text = """
            {"shortLink":"https://go.example.com/a","domain":"go.example.com","suffix":"a","state":"disabled","parameters":{"link":"https://example.com/a"},"created":5,"updated":6}

            not json
            {"domain":"go.example.com","suffix":"b","state":"deleted","parameters":{"link":"https://example.com/b"}}
            {"domain":"go.example.com","suffix":"c","parameters":{"link":3}}
            {"domain":"go.example.com","suffix":"d","parameters":{"link":"https://evil.example/"}}
            {"suffix":"e"}
            """
        let plan = ShortLinkImport.jsonLines(Array(text.utf8), config: Self.config)
        #expect(plan.candidates.count == 1)
        let first = plan.candidates.first?.link
        #expect(
            first?.suffix == "a" && first?.state == .disabled && first?.created == 5
                && first?.parameters == ["link": "https://example.com/a"]
        )
        #expect(plan.skipped.map(\.line) == [3, 4, 5, 6, 7])
        #expect(
            plan.skipped.map(\.reason) == [
                "is not a JSON object", "is deleted", "has a parameter that is not a string",
                "link points at evil.example, which this site's links.allow does not list", #"has no "domain" and "suffix""#,
            ]
        )
    }
}
