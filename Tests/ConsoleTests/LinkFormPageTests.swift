import Testing

@testable import ConsolePages

/// The console's form for a new short link: every link domain offered, a refused submission's words
/// above the form with its field marked and what was typed kept — as text, never as markup.
@Suite("Console: the form for a new short link")
struct LinkFormPageTests {
    @Test("The form posts to its own path and offers every link domain; with none it says how to get one")
    func empty() {
        let html = LinkFormPage.html(LinkFormPage.Content(domains: ["go.example.com", "links.example.org"]))
        #expect(html.contains(#"<form class="link" method="post" action="/console/links/new">"#))
        #expect(html.contains("<option>go.example.com</option>\n<option>links.example.org</option>"))
        #expect(html.contains(#"<input name="link" type="url" required>"#))
        #expect(!html.contains("role=\"alert\"") && !html.contains("aria-invalid") && !html.contains("<script"))
        #expect(html.contains(#"<input name="token" type="password" autocomplete="current-password" required>"#))
        var untokened = LinkFormPage.Content(domains: ["go.example.com"])
        untokened.tokenConfigured = false
        let closed = LinkFormPage.html(untokened)
        #expect(!closed.contains(#"name="token""#) && closed.contains("Creating links needs a token, here as in the API"))
        let none = LinkFormPage.html(LinkFormPage.Content(domains: []))
        #expect(none.contains("No site of the config has \"links\"") && !none.contains("<form"))
    }

    @Test("A refusal: its words, the field marked, the values kept and escaped, the domain and the box as chosen")
    func refused() {
        let html = LinkFormPage.html(
            LinkFormPage.Content(
                domains: ["go.example.com", "links.example.org"],
                values: [
                    "domain": "links.example.org", "link": "https://evil.example/\"><script>x</script>", "st": "Tom & Jerry", "short": "on",
                ],
                refusal: "link points at evil.example, which this site's links.allow does not list",
                field: "link"
            )
        )
        #expect(
            html.contains(#"<p class="error" role="alert">Not created: link points at evil.example, which this site&#39;s links.allow"#)
        )
        #expect(html.contains(#"<option selected>links.example.org</option>"#) && html.contains("<option>go.example.com</option>"))
        #expect(
            html.contains(
                #"<input name="link" type="url" value="https://evil.example/&quot;&gt;&lt;script&gt;x&lt;/script&gt;" required aria-invalid="true" class="invalid">"#
            )
        )
        #expect(html.contains(#"<input name="st" type="text" value="Tom &amp; Jerry">"#))
        #expect(html.contains(#"<input name="short" type="checkbox" checked>"#))
        #expect(!html.contains("<script>"))
    }
}
