import AASA
import Testing

@testable import Check
@testable import HTTP1

/// `check --link`: the answers each kind of visitor got for a link path, judged without a network.
@Suite("check --link: evaluating clicks per visitor (no network)")
struct LinkFindingsTests {
    let base = CheckEvaluationTests()

    func clicks(_ path: String, _ answers: [String: Exchange]) -> HostObservation {
        var seen = base.observation(get: base.exchange(200))
        seen.links = LinkFindings.visitors.map { visitor in (path, visitor.name, answers[visitor.name] ?? base.exchange(404, [], body: []))
        }
        return seen
    }

    func page(_ html: String) -> Exchange { base.exchange(200, [("Content-Type", "text/html; charset=utf-8")], body: Array(html.utf8)) }
    func redirect(_ location: String) -> Exchange { base.exchange(302, [("Location", location)], body: []) }

    var good: [String: Exchange] {
        [
            "iPhone": page(#"<meta name="apple-itunes-app" content="app-id=1, app-argument=https://example.com/p/1">"#),
            "Android": redirect("https://play.google.com/store/apps/details?id=com.example.shop&referrer=x"),
            "desktop": redirect("https://shop.example.com/p/1"),
            "link preview": page(#"<meta property="og:title" content="A">"#),
            "in-app browser": page("<p>open in the app</p>"),
        ]
    }

    func findings(_ observation: HostObservation) -> [CheckFinding] {
        HostEvaluation.evaluate(observation, CheckExpectations()).filter { $0.rule.hasPrefix("check.link") }
    }

    @Test("Right answers for every visitor are one pass line listing them")
    func pass() {
        let found = findings(clicks("/p/1", good))
        #expect(found.map(\.rule) == ["check.link"], "\(found)")
        #expect(found.first?.message.hasPrefix("/p/1 without the app: iPhone 200; Android 302 → https://play.google.com/") == true)
    }

    @Test("A redirected preview fetcher, store links naming no app, a page without the banner or the tags")
    func wrongAnswers() {
        var answers = good
        answers["link preview"] = redirect("https://apps.apple.com/app/id1")
        answers["Android"] = redirect("https://play.google.com/store/apps/details?referrer=x")
        answers["desktop"] = redirect("https://apps.apple.com/us/app/shop")
        answers["iPhone"] = page("<p>no banner</p>")
        let rules = findings(clicks("/p/1", answers)).map { "\($0.severity.rawValue) \($0.rule)" }
        #expect(rules.contains("error check.link-crawler-redirect"), "\(rules)")
        #expect(rules.filter { $0 == "error check.link-store-id" }.count == 2, "\(rules)")
        #expect(rules.contains("warning check.link-no-banner"), "\(rules)")
        #expect(!rules.contains("pass check.link"))
        answers = good
        answers["link preview"] = page("<title>bare</title>")
        #expect(findings(clicks("/p/1", answers)).map(\.rule) == ["check.link-preview-tags"])
    }

    @Test("A 404 is one finding naming who gets it, and says when the AASA opens the path for app users")
    func notFound() {
        let everyone = findings(clicks("/p/9", [:]))
        #expect(everyone.count == 1 && everyone[0].rule == "check.link-404", "\(everyone)")
        // The observed AASA opens /p/*: installed users get the app, everyone else the 404.
        #expect(
            everyone[0].message
                == "/p/9 opens the app for those who have it, and is a 404 for everyone without it: add a link rule for it (a store, a fallback or the web)"
        )
        var some = good
        some["desktop"] = base.exchange(404, [], body: [])
        #expect(findings(clicks("/x", some)).first?.message.hasPrefix("/x is a 404 for desktop:") == true)
    }

    @Test(
        "With --config: a redirect the config never vouched for is a finding; its allowlist, its rules' hosts, openHost and the stores are not"
    )
    func offAllowlist() throws {
        let text = #"""
            {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 1, "android": {"package": "com.example.shop",
              "sha256": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]}}},
             "sites": [{"hosts": ["example.com"], "links": {"app": "shop", "openHost": "open.example.com", "allow": ["https://partner.example/ok/"],
               "rules": [{"/": "/p/*", "web": "https://shop.example.com/{1}", "android": {"fallback": "https://m.example.com/"}}]}}]}
            """#
        let config = ConfigLoader.load(
            configBytes: Array(text.utf8),
            configPath: "config.json",
            readFile: { _ in .failure(FileReadError("none")) }
        )
        try #require(!config.hasErrors, "\(config.diagnostics)")
        let expectations = CheckExpectations().forHost("example.com", config: config)
        func offList(_ answers: [String: Exchange]) -> [String] {
            HostEvaluation.evaluate(clicks("/p/1", answers), expectations).filter { $0.rule == "check.link-off-allowlist" }.map(\.message)
        }
        #expect(offList(good).isEmpty)
        var answers = good
        answers["desktop"] = redirect("https://partner.example/ok/deal")
        answers["in-app browser"] = redirect("https://m.example.com/p/1")
        #expect(offList(answers).isEmpty)
        answers["desktop"] = redirect("https://partner.example/other")
        answers["Android"] = redirect("https://evil.example/")
        let found = offList(answers)
        #expect(found.count == 2, "\(found)")
        #expect(found.first?.hasPrefix("Android is sent to https://evil.example/, which the config neither allows") == true)
        // Without --config nothing is known about where links may go.
        #expect(!findings(clicks("/p/1", answers)).contains { $0.rule == "check.link-off-allowlist" })
    }
}
