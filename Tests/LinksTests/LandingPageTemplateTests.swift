import Testing

@testable import AASA
@testable import Links

/// A site's own landing page: the documented placeholders filled in and escaped, every problem found with
/// its line and column, the page's inline styles allowed by hash and nothing else.
@Suite("Landing page templates: placeholders, escaping, problems with line:column, CSP hashes")
struct LandingPageTemplateTests {
    static let page = """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>{{title}} · {{ appName }}</title>
        {{head}}
        <style>body{color:red}</style>
        </head><body>
        <img src="{{appIcon}}" alt=""><h1>{{title}}</h1><p>{{description}}</p><img src="{{image}}">
        <p class="note">{{note}}</p>{{buttons}}<a href="{{web}}">web</a> <code>{{link}}</code> <code>{{deepLink}}</code>
        </body></html>
        """

    static func parsed(_ text: String) -> Result<LandingPageTemplate, LandingPageTemplate.Problems> {
        LandingPageTemplate.parse(Array(text.utf8))
    }

    @Test("Every placeholder filled in, every value escaped; head carries the banner and the preview tags; in-app pages get the note")
    func filled() throws {
        let template = try Self.parsed(Self.page).get()
        #expect(template.parts.count == 25)
        for kind: LinkPageContent.Kind in [.landing, .inAppBrowser("Instagram")] {
            let html = LinkPages.render(LinkPagesTests.content(kind), template: template)
            #expect(html.hasPrefix("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>&lt;script&gt;"))
            #expect(!html.contains("<script") && !html.contains("{{"), "\(kind)")
            for tag in ["<b>", "<i>", "<u>", "<s>"] { #expect(!html.contains(tag), "\(tag) in \(kind)") }
            #expect(html.contains(#"<meta name="apple-itunes-app" content="app-id=123, app-argument="#))
            #expect(html.contains(#"<meta property="og:url" content="https://go.example.com/p/1?a=&quot;&gt;&lt;script&gt;">"#))
            #expect(html.contains(#"<img src="https://cdn.example.com/i.png" alt="">"#))
            #expect(
                html.contains(#"<nav class="actions">"#) && html.contains(#"href="https://apps.apple.com/app/id123?&quot;&gt;&lt;s&gt;""#)
            )
            #expect(html.contains(#"<a href="https://shop.example.com/&quot;&gt;&lt;u&gt;">web</a>"#))
            let note = html.contains("This link opens best in the app or in your browser. Instagram")
            #expect(note == (kind != .landing), "\(kind)")
        }
        // Crawlers keep the built-in preview page: they read its tags, not the team's design.
        let preview = LinkPages.render(LinkPagesTests.content(.preview), template: template)
        #expect(preview == LinkPages.render(LinkPagesTests.content(.preview)))
    }

    @Test("The policy allows the template's own <style> by its SHA-256 and the listed image origins; previews keep the strict one")
    func policy() throws {
        let template = try Self.parsed(Self.page).get()
        #expect(template.styleHashes == ["'sha256-FcQqt3aNlV7AZnGV4zkQRVeCeJOxbMPnQSx258L803E='"])
        let policy = LinkPages.contentSecurityPolicy(
            for: LinkPagesTests.content(.landing),
            template: template,
            imageOrigins: ["https://media.example.com"]
        )
        #expect(
            policy
                == "default-src 'none'; style-src 'self' 'sha256-FcQqt3aNlV7AZnGV4zkQRVeCeJOxbMPnQSx258L803E='; "
                + "img-src https://cdn.example.com https://img.example.com https://media.example.com; base-uri 'none'; form-action 'none'; "
                + "frame-ancestors 'none'"
        )
        let preview = LinkPages.contentSecurityPolicy(
            for: LinkPagesTests.content(.preview),
            template: template,
            imageOrigins: ["https://media.example.com"]
        )
        #expect(preview == LinkPages.contentSecurityPolicy(for: LinkPagesTests.content(.preview)))
    }

    @Test(
        "Problems: an unknown placeholder (with a suggestion), an unclosed one, a script, a placeholder in a style, no head, not UTF-8, too large"
    )
    func problems() {
        func problems(_ text: String) -> [LandingPageTemplate.Problem] {
            guard case .failure(let found) = Self.parsed(text) else { return [] }
            return found.all
        }
        let unknown = problems("<head>{{head}}</head>\n<h1>{{titel}}</h1>\n  <p>{{price}}</p>")
        #expect(unknown.map(\.rule) == ["links.page-placeholder", "links.page-placeholder"])
        #expect(unknown.first?.message == "no placeholder {{titel}}; did you mean {{title}}?")
        #expect(unknown.first.flatMap(\.location).map { [$0.line, $0.column] } == [2, 5])
        #expect(unknown.last?.message.contains("the placeholders are {{head}}, {{title}}") == true)
        #expect(unknown.last.flatMap(\.location).map { [$0.line, $0.column] } == [3, 6])

        #expect(problems("{{head}} {{title").map(\.rule) == ["links.page-placeholder"])
        let script = problems("{{head}}\n<SCRIPT src=x></script>")
        #expect(script.map(\.rule) == ["links.page-script"] && script.first?.location?.line == 2)
        #expect(problems("{{head}}<style>h1{color:{{title}}}</style>").map(\.rule) == ["links.page-style"])
        #expect(problems("{{head}}<style>h1{}").map(\.rule) == ["links.page-style"])
        #expect(problems("<h1>{{title}}</h1>").map(\.rule) == ["links.page-head"])
        #expect(LandingPageTemplate.parse([0x7B, 0xFF]).failureRules == ["links.landing-page"])
        let large = [UInt8](repeating: 0x61, count: LandingPageTemplate.maximumSize + 1)
        #expect(LandingPageTemplate.parse(large).failureRules == ["links.landing-page"])
    }
}

extension Result where Success == LandingPageTemplate, Failure == LandingPageTemplate.Problems {
    var failureRules: [String] {
        if case .failure(let problems) = self { return problems.all.map(\.rule) }
        return []
    }
}
