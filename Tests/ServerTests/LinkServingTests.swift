import Foundation
import TestSupport
import Testing

/// Link paths on the real binary: curl with each class's User-Agent against a config with link rules,
/// asserting status, Location, headers and tags; the well-known paths as they always were.
@Suite("Serving link paths per visitor", .serialized)
struct LinkServingTests {
    static let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
    static let config = #"""
        {"version": 1,
         "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "android": {"package": "com.example.shop", "sha256": ["\#(fingerprint)"]},
                           "appStoreID": 123456789, "name": "Example Shop", "icon": "https://cdn.example.com/icon.png"}},
         "sites": [
           {"hosts": ["go.example.com"],
            "links": {"app": "shop", "openHost": "open.example.com", "rules": [
              {"/": "/admin/*", "exclude": true},
              {"/": "/p/*", "web": "https://shop.example.com/item/{1}",
               "preview": {"title": "Spring <sale>", "description": "Everything half price", "image": "https://cdn.example.com/p.png"}},
              {"/": "/promo", "ios": {"straightToStore": true, "campaignToken": "spring"}, "web": "https://shop.example.com/promo"},
              {"/": "/*", "web": "https://shop.example.com{path}"}
            ]}},
           {"hosts": ["open.example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/*"}]}]}}
         ],
         "server": {"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0"}}
        """#

    static let iPhone =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
    static let android =
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36"
    static let desktop = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
    static let slack = "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"
    static let instagram =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 339.0.3.12.91"

    struct Answer {
        var status: Int
        var head: String
        var body: String
        func header(_ name: String) -> String? {
            head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }
    }

    func get(
        _ server: ServerProcess,
        _ path: String,
        agent: String?,
        host: String = "go.example.com",
        extra: [String] = []
    ) throws -> Answer {
        var arguments = ["curl", "-s", "-D", "-", "-H", "Host: \(host)"]
        if let agent { arguments += ["-A", agent] } else { arguments += ["-H", "User-Agent:"] }
        let result = try runTool(arguments + extra + ["http://127.0.0.1:\(server.port)\(path)"])
        let text = String(decoding: result.stdout, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let status = Int(parts[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        return Answer(status: status, head: parts[0], body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test(
        "Each visitor class gets its answer: desktop the web, Android the Play Store, iPhone the landing page, a crawler the preview, Instagram the in-app page"
    )
    func perVisitor() throws {
        let server = try ServerProcess(config: Self.config)
        defer { server.stop() }
        let desktop = try get(server, "/p/42?utm_source=mail", agent: Self.desktop)
        #expect(desktop.status == 302 && desktop.header("Location") == "https://shop.example.com/item/42", "\(desktop.head)")
        #expect(desktop.header("Cache-Control") == "private, no-store")
        let noAgent = try get(server, "/p/42", agent: nil)
        #expect(noAgent.status == 302 && noAgent.header("Location") == "https://shop.example.com/item/42")

        let android = try get(server, "/p/42", agent: Self.android)
        #expect(android.status == 302)
        #expect(
            android.header("Location")
                == "https://play.google.com/store/apps/details?id=com.example.shop&referrer=https%3A%2F%2Fgo.example.com%2Fp%2F42"
        )

        let iPhone = try get(server, "/p/42", agent: Self.iPhone)
        #expect(iPhone.status == 200 && iPhone.header("Content-Type") == "text/html; charset=utf-8")
        #expect(
            iPhone.body.contains(#"<meta name="apple-itunes-app" content="app-id=123456789, app-argument=https://go.example.com/p/42">"#)
        )
        #expect(iPhone.body.contains(#"href="https://open.example.com/p/42""#))
        #expect(iPhone.body.contains(#"href="https://apps.apple.com/app/id123456789""#))
        #expect(iPhone.body.contains("Spring &lt;sale&gt;") && !iPhone.body.contains("<sale>"))
        let policy = try #require(iPhone.header("Content-Security-Policy"))
        #expect(policy.hasPrefix("default-src 'none'; style-src 'self'; img-src https://cdn.example.com;"), "\(policy)")

        let store = try get(server, "/promo", agent: Self.iPhone)
        #expect(store.status == 302 && store.header("Location") == "https://apps.apple.com/app/id123456789?ct=spring")

        let slack = try get(server, "/promo", agent: Self.slack)
        #expect(slack.status == 200, "a crawler is never redirected: \(slack.head)")
        #expect(slack.body.contains(#"<meta property="og:title" content="Example Shop">"#))

        let instagram = try get(server, "/promo", agent: Self.instagram)
        #expect(instagram.status == 200 && instagram.body.contains("Instagram"))
        #expect(instagram.body.contains(#"href="https://apps.apple.com/app/id123456789?ct=spring""#))

        let other = try get(server, "/anything/else", agent: Self.desktop)
        #expect(other.header("Location") == "https://shop.example.com/anything/else")

        // Counted by site, visitor class and outcome.
        func metrics() -> String {
            let result = try? runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/metrics"])
            return result.map { String(decoding: $0.stdout, as: UTF8.self) } ?? ""
        }
        let expected = [
            #"aasa_link_answers_total{host="go.example.com",visitor="desktop",outcome="web"} 3"#,
            #"aasa_link_answers_total{host="go.example.com",visitor="android",outcome="store"} 1"#,
            #"aasa_link_answers_total{host="go.example.com",visitor="iphone",outcome="landing"} 1"#,
            #"aasa_link_answers_total{host="go.example.com",visitor="iphone",outcome="store"} 1"#,
            #"aasa_link_answers_total{host="go.example.com",visitor="crawler",outcome="preview"} 1"#,
            #"aasa_link_answers_total{host="go.example.com",visitor="in-app",outcome="in-app"} 1"#,
            #"aasa_requests_total{host="go.example.com",path="link",status="302"} 5"#,
        ]
        #expect(waitUntil(5) { expected.allSatisfy(metrics().contains) }, "\(metrics())")

        // The console's host page lists the rules and answers a URL per visitor.
        let page = String(
            decoding: try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/console/host/go.example.com?url=%2Fp%2F42"]).stdout,
            as: UTF8.self
        )
        #expect(page.contains("<h2>Link rules</h2>"), "\(page)")
        #expect(
            page.contains(
                "<li>{&quot;/&quot;:&quot;/p/*&quot;}: web https://shop.example.com/item/{1}; preview &quot;Spring &lt;sale&gt;&quot;</li>"
            ),
            "\(page)"
        )
        #expect(page.contains("<li>desktop: 302 to the web: https://shop.example.com/item/42</li>"), "\(page)")
        #expect(page.contains("Without the app, decided by link rule 1"))
    }

    @Test("The well-known paths are unchanged and carry the links; excluded paths, other hosts and the reserved space are not links")
    func boundaries() throws {
        let server = try ServerProcess(config: Self.config)
        defer { server.stop() }
        let aasa = try get(server, "/.well-known/apple-app-site-association", agent: Self.iPhone)
        #expect(aasa.status == 200 && aasa.header("Content-Type") == "application/json")
        #expect(aasa.body.contains(#"{"/":"/_/*","exclude":true"#) && aasa.body.contains(#"{"/":"/p/*"}"#), "\(aasa.body)")
        let legacy = try get(server, "/apple-app-site-association", agent: Self.desktop)
        #expect(legacy.status == 200 && legacy.body == aasa.body)
        let assetLinks = try get(server, "/.well-known/assetlinks.json", agent: Self.android)
        #expect(assetLinks.status == 200 && assetLinks.body.contains("com.example.shop"))
        #expect(try get(server, "/admin/x", agent: Self.desktop).status == 404)
        #expect(try get(server, "/_/anything", agent: Self.desktop).status == 404)
        #expect(try get(server, "/p/1", agent: Self.desktop, host: "open.example.com").status == 404)
        #expect(try get(server, "/p/1", agent: Self.desktop, host: "unknown.example.net").status == 404)
        let style = try get(server, "/_/link.css", agent: Self.iPhone)
        #expect(
            style.status == 200 && style.header("Content-Type") == "text/css; charset=utf-8" && style.body.contains("prefers-color-scheme")
        )
    }

    @Test("HEAD like GET without a body; other methods 405 with Allow; an 8 KB User-Agent and 2,000 query parameters are answered")
    func methodsAndBadInput() throws {
        let server = try ServerProcess(config: Self.config)
        defer { server.stop() }
        let head = try get(server, "/p/42", agent: Self.iPhone, extra: ["-I"])
        let full = try get(server, "/p/42", agent: Self.iPhone)
        #expect(head.status == 200 && head.header("Content-Length") == "\(full.body.utf8.count)")
        #expect(!head.body.contains("<html") && full.body.contains("<html"))
        for method in ["POST", "PUT", "DELETE"] {
            let refused = try get(server, "/p/42", agent: Self.desktop, extra: ["-X", method])
            #expect(refused.status == 405 && refused.header("Allow") == "GET, HEAD", "\(method): \(refused.head)")
        }
        let long = try get(server, "/p/42", agent: String(repeating: "x", count: 8_000) + " iPhone")
        #expect(long.status == 200 || long.status == 431, "\(long.head)")
        let query = (0..<2_000).map { "k\($0)=v" }.joined(separator: "&")
        let many = try get(server, "/p/42?" + query, agent: Self.desktop)
        #expect(many.status == 302 || many.status == 414 || many.status == 431, "\(many.head)")
        if many.status == 302 { #expect(many.header("Location") == "https://shop.example.com/item/42") }
        // Tricks in the path stay on the destination's host.
        let tricky = try get(server, "/p/%2F%2Fevil.example/%5C@x", agent: Self.desktop, extra: ["--path-as-is"])
        #expect(tricky.header("Location") == "https://shop.example.com/item/%2F%2Fevil.example/%5C@x", "\(tricky.head)")
    }

    @Test(
        "FDL long links: routed per platform as FDL documented, d=1 shows the flow, anything off the allowlist is a 400 page naming the parameter"
    )
    func firebaseLongLinks() throws {
        let config = Self.config.replacingOccurrences(
            of: #""links": {"app": "shop","#,
            with: #""links": {"app": "shop", "firebaseLongLinks": true, "allow": ["example.com", "https://shop.example.com/"],"#
        )
        let server = try ServerProcess(config: config)
        defer { server.stop() }
        let link = "/?link=https%3A%2F%2Fexample.com%2Fp%2F7&apn=com.example.shop&ibi=com.example.shop&isi=123456789"
        let android = try get(server, link + "&amv=3", agent: Self.android)
        #expect(
            android.status == 302
                && android.header("Location")?.hasPrefix(
                    "https://play.google.com/store/apps/details?id=com.example.shop&referrer=https%3A%2F%2Fexample.com%2Fp%2F7"
                ) == true
        )
        let store = try get(server, link + "&efr=1&ct=fdl", agent: Self.iPhone)
        #expect(store.header("Location") == "https://apps.apple.com/app/id123456789?ct=fdl")
        let desktop = try get(server, link + "&ofl=https%3A%2F%2Fshop.example.com%2Fdesk", agent: Self.desktop)
        #expect(desktop.header("Location") == "https://shop.example.com/desk")
        let preview = try get(server, link + "&st=Hello+%3Cworld%3E", agent: Self.slack)
        #expect(preview.status == 200 && preview.body.contains(#"<meta property="og:title" content="Hello &lt;world&gt;">"#))
        let debug = try get(server, link + "&d=1", agent: Self.desktop)
        #expect(debug.status == 200 && debug.body.contains("<th>Android</th>") && debug.body.contains("302 to the store"), "\(debug.body)")
        for (query, parameter) in [
            ("/?link=https%3A%2F%2Fevil.example%2F", "link"), ("/?link=https%3A%2F%2Fexample.com%5C%40evil.example%2F", "link"),
            ("/?link=javascript%3Aalert(1)", "link"), ("/?link=https%3A%2F%2Fexample.com%2F%0D%0ASet-Cookie%3A%20a%3Db", "link"),
            ("/?link=https%3A%2F%2Fexample.com%2F&afl=https%3A%2F%2Fevil.example%2F", "afl"),
            ("/?link=https%3A%2F%2Fexample.com%2F&ibi=com.evil", "ibi"),
        ] {
            let refused = try get(server, query, agent: Self.android)
            #expect(refused.status == 400 && refused.header("Location") == nil, "\(query): \(refused.head)")
            #expect(refused.body.contains("<code>\(parameter)</code>"), "\(query): \(refused.body)")
        }
        let flood = "/?link=https%3A%2F%2Fexample.com%2F&" + (0..<2_000).map { "k\($0)=v" }.joined(separator: "&")
        let many = try get(server, flood, agent: Self.desktop)
        #expect(many.status == 400 || many.status == 414 || many.status == 431, "\(many.head)")
        // The root without link is still an ordinary link path.
        #expect(try get(server, "/", agent: Self.desktop).header("Location") == "https://shop.example.com/")
    }

    @Test(
        "In chromium as an iPhone at 390 px, light and dark: no console error or CSP violation, the banner and the three buttons; a site's own template with its style allowed by hash; the preview read by BeautifulSoup"
    )
    func browser() throws {
        let python = TestPaths.repositoryRoot + "/.ci/venv/bin/python"
        try #require(FileManager.default.isExecutableFile(atPath: python), ".ci/run creates .ci/venv with selenium and beautifulsoup4")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), ".ci/run installs chromium and chromium-driver")
        // No icon or preview image: the browser must not reach outside the machine.
        let config = Self.config
            .replacingOccurrences(of: #", "icon": "https://cdn.example.com/icon.png""#, with: "")
            .replacingOccurrences(
                of: #""title": "Spring <sale>", "description": "Everything half price", "image": "https://cdn.example.com/p.png""#,
                with: #""title": "Spring <sale> & more", "description": "Everything half price""#
            )
            .replacingOccurrences(
                of: #""links": {"app": "shop","#,
                with: #""links": {"app": "shop", "firebaseLongLinks": true, "allow": ["example.com"],"#
            )
            .replacingOccurrences(
                of: #""sites": ["#,
                with:
                    #""sites": [{"hosts": ["custom.example.com"], "links": {"app": "shop", "openHost": "open.example.com", "landingPage": "landing.html", "rules": [{"/": "/*"}]}},"#
            )
        let server = try ServerProcess(config: config, files: ["landing.html": Self.template])
        defer { server.stop() }
        let screenshots = TestPaths.repositoryRoot + "/.build/link-screenshots"
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        let result = try runTool(
            [
                "flock", "-w", "180", TestPaths.chromiumLock, python,
                TestPaths.repositoryRoot + "/Tests/ServerTests/Fixtures/link-browser.py", "\(server.port)", screenshots,
            ],
            timeout: 300
        )
        #expect(result.status == 0, "\(String(decoding: result.stdout, as: UTF8.self))\(result.stderr)")
        for name in ["landing-light.png", "landing-dark.png", "flow.png", "own-landing.png"] {
            #expect(FileManager.default.fileExists(atPath: screenshots + "/" + name), "\(name) kept for CI")
        }
    }

    @Test("check --link clicks each path as every kind of visitor against the live server: a pass line, a 404 finding, JSON and JUnit")
    func checkLinks() throws {
        let server = try ServerProcess(config: Self.config)
        defer { server.stop() }
        let junit = server.directory + "/links.xml"
        let result = try runTool([
            TestPaths.serverExecutable, "check", "http://go.example.com", "--connect", "127.0.0.1:\(server.port)", "--plain-http-ok",
            "--link", "/p/42", "--link", "/admin/x", "--json", "--junit", junit,
        ])
        #expect(result.status == 1, "the 404 fails the check")
        let text = String(decoding: result.stdout, as: UTF8.self)
        #expect(
            text.contains(#""rule": "check.link""#)
                && text.contains(
                    "/p/42 without the app: iPhone 200; Android 302 → https://play.google.com/store/apps/details?id=com.example.shop"
                ),
            "\(text)"
        )
        #expect(text.contains(#""rule": "check.link-404""#) && text.contains("/admin/x is a 404 for everyone"), "\(text)")
        let report = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(report.contains("check.link-404"), "\(report)")
        // With the config, every redirect the server gave goes where the config vouches for; a config whose
        // rule names another destination sees the live one as off its list.
        let vouched = try runTool([
            TestPaths.serverExecutable, "check", "http://go.example.com", "--connect", "127.0.0.1:\(server.port)", "--plain-http-ok",
            "--config", server.directory + "/config.json", "--link", "/p/42", "--link", "/promo",
        ])
        #expect(vouched.status == 0 && !vouched.stdout.isEmpty, "\(String(decoding: vouched.stdout, as: UTF8.self))\(vouched.stderr)")
        try write(
            Self.config.replacingOccurrences(of: "https://shop.example.com/item/{1}", with: "https://store.example.com/item/{1}")
                .replacingOccurrences(of: "https://shop.example.com{path}", with: "https://store.example.com{path}")
                .replacingOccurrences(of: "https://shop.example.com/promo", with: "https://store.example.com/promo"),
            to: server.directory + "/other.json"
        )
        let stale = try runTool([
            TestPaths.serverExecutable, "check", "http://go.example.com", "--connect", "127.0.0.1:\(server.port)", "--plain-http-ok",
            "--config", server.directory + "/other.json", "--link", "/p/42",
        ])
        let staleText = String(decoding: stale.stdout, as: UTF8.self)
        #expect(stale.status == 1 && staleText.contains("check.link-off-allowlist"), "\(staleText)")
        #expect(staleText.contains("desktop is sent to https://shop.example.com/item/42, which the config neither allows"), "\(staleText)")
    }

    static let template = """
        <!doctype html><html><head><meta charset="utf-8"><title>{{title}}</title>{{head}}<style>h1{color:rgb(1, 2, 3)}</style></head>
        <body><h1>{{title}}</h1><p>{{description}}</p>{{buttons}}<footer>MARK</footer></body></html>
        """

    @Test(
        "A site's own landing page: placeholders filled in and escaped, its style allowed by hash, edits picked up by the reload, a broken template rejected while the last good one serves"
    )
    func ownLandingPage() throws {
        let config = Self.config.replacingOccurrences(
            of: #""links": {"app": "shop","#,
            with: #""links": {"app": "shop", "landingPage": "pages/landing.html", "imageOrigins": ["https://media.example.com"],"#
        )
        let server = try ServerProcess(
            config: config,
            files: ["pages/landing.html": Self.template.replacingOccurrences(of: "MARK", with: "v1")]
        )
        defer { server.stop() }
        let page = try get(server, "/p/42", agent: Self.iPhone)
        #expect(page.status == 200 && page.body.contains("<footer>v1</footer>"), "\(page.body)")
        #expect(page.body.contains("<h1>Spring &lt;sale&gt;</h1>") && page.body.contains(#"<meta name="apple-itunes-app""#))
        #expect(page.body.contains(#"<a class="button primary" href="https://apps.apple.com/app/id123456789">"#))
        let policy = page.header("Content-Security-Policy") ?? ""
        #expect(policy.contains("style-src 'self' 'sha256-") && policy.contains("https://media.example.com"), "\(policy)")
        // Crawlers keep the built-in preview; desktops still go to the web.
        #expect(try get(server, "/p/42", agent: Self.slack).body.contains("<footer>") == false)
        #expect(try get(server, "/p/42", agent: Self.desktop).status == 302)

        try atomicWrite(Self.template.replacingOccurrences(of: "MARK", with: "v2"), to: server.directory + "/pages/landing.html")
        #expect(waitUntil(5) { (try? get(server, "/p/42", agent: Self.iPhone).body.contains("<footer>v2</footer>")) == true })
        try atomicWrite("<html>{{head}}<h1>{{titel}}</h1></html>", to: server.directory + "/pages/landing.html")
        #expect(waitUntil(5) { server.stderr.contains("[links.page-placeholder]") }, "\(server.stderr)")
        #expect(server.stderr.contains("landing.html:1:19: error: no placeholder {{titel}}; did you mean {{title}}?"), "\(server.stderr)")
        #expect(try get(server, "/p/42", agent: Self.iPhone).body.contains("<footer>v2</footer>"), "the last good template keeps serving")
    }

    @Test("validate: a link the AASA does not open is an error; an AASA path no link answers is a warning")
    func coverage() throws {
        try withTemporaryDirectory { directory in
            let config = #"""
                {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 1}},
                 "sites": [{"hosts": ["go.example.com"],
                   "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/p/*"}, {"/": "/q/*"}]}]},
                   "links": {"app": "shop", "rules": [{"/": "/p/*"}, {"/": "/help", "web": "https://help.example.com/"}]}}]}
                """#
            try write(config, to: directory + "/config.json")
            let result = try runTool([TestPaths.serverExecutable, "validate", "--config", directory + "/config.json"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("the link rule \"/help\" is not opened by this site's AASA"), "\(result.stderr)")
            #expect(result.stderr.contains("[links.not-in-aasa]") && result.stderr.contains("at $.sites[0].links.rules[1]"))
            #expect(
                result.stderr.contains("the AASA opens \"/q/*\" but no link rule answers it")
                    && result.stderr.contains("[links.aasa-unanswered]")
            )
            let fixed = config.replacingOccurrences(of: #""/help", "web""#, with: #""/help", "webOnly": true, "web""#)
                .replacingOccurrences(of: #"{"/": "/q/*"}"#, with: #"{"/": "/p/x"}"#)
            try write(fixed, to: directory + "/config.json")
            let clean = try runTool([TestPaths.serverExecutable, "validate", "--config", directory + "/config.json"])
            #expect(clean.status == 0, "\(clean.stderr)")
        }
    }
}
