import Support
import Testing

@testable import AASA
@testable import Links

/// Link rules from the config, the rule a path falls under, and where each visitor goes — pure.
@Suite("Link rules: config, matching and routing per visitor")
struct LinkRoutingTests {
    static let config = #"""
        {"version": 1,
         "apps": {"shop": {"apple": "ABCDE12345.com.example.shop",
                           "android": {"package": "com.example.shop", "sha256": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]},
                           "appStoreID": 123456789, "name": "Example Shop", "icon": "https://cdn.example.com/icon.png"}},
         "sites": [{"hosts": ["go.example.com"],
                    "links": {"app": "shop", "openHost": "open.example.com", "rules": [
                      {"/": "/admin/*", "exclude": true},
                      {"/": "/p/*", "web": "https://shop.example.com/item/{1}", "deepLink": "https://example.com/product/{1}",
                       "preview": {"title": "A product", "description": "Buy it", "image": "https://cdn.example.com/p.png"}},
                      {"/": "/promo", "ios": {"straightToStore": true, "campaignToken": "spring sale"}, "web": "https://shop.example.com/promo"},
                      {"/": "/help/*", "webOnly": true, "web": "https://help.example.com/{1}"},
                      {"/": "/fb/*", "ios": {"fallback": "https://m.example.com/ios/{1}", "ipadFallback": "https://m.example.com/ipad/{1}"},
                       "android": {"fallback": "https://m.example.com/android/{1}"}},
                      {"/": "/a/*/b/?", "android": {"landing": true, "minVersionCode": 42}},
                      {"/": "/*"}
                    ]}}]}
        """#

    static func links() throws -> SiteLinks {
        let decoded = ConfigDecoder.decode(Array(config.utf8))
        #expect(!decoded.diagnostics.contains { $0.severity == .error }, "\(decoded.diagnostics)")
        return try #require(decoded.config?.sites.first?.links)
    }

    static func decide(_ path: String, query: String? = nil, _ visitor: Visitor) throws -> LinkDecision? {
        let links = try links()
        guard let found = LinkMatcher(rules: links.rules).match(path: path, query: query) else { return nil }
        return LinkRouting.decide(
            links.rules[found.rule],
            captures: found.captures,
            links: links,
            request: LinkRequest(host: "go.example.com", path: path, query: query, visitor: visitor)
        )
    }

    @Test("First rule wins; exclude makes a path no link; the reserved /_/ space is never a link; captures per wildcard")
    func matching() throws {
        let matcher = LinkMatcher(rules: try Self.links().rules)
        #expect(matcher.match(path: "/admin/users", query: nil) == nil)
        #expect(matcher.match(path: "/_/link.css", query: nil) == nil)
        #expect(matcher.match(path: "/p/42", query: "x=1") == LinkMatcher.Found(rule: 1, captures: ["42"]))
        #expect(matcher.match(path: "/p/a/b", query: nil)?.captures == ["a/b"])
        #expect(matcher.match(path: "/a/one/two/b/z", query: nil) == LinkMatcher.Found(rule: 5, captures: ["one/two", "z"]))
        #expect(matcher.match(path: "/anything", query: nil)?.rule == 6)
    }

    @Test(
        "The byte matcher for plain path rules decides exactly as the AASA matcher, on 20,000 random rule sets and paths; its captures rebuild the path"
    )
    func plainPathsAgreeWithMatcher() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "b", "A", "/", "*", "?", "%", "2"]
        func random(_ length: Int) -> String { String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }) }
        for _ in 0..<20_000 {
            let rules = (0..<Int.random(in: 1...4, using: &generator)).map { _ in
                var component = Component()
                component.path = "/" + random(Int.random(in: 0...5, using: &generator))
                component.exclude = Bool.random(using: &generator) && Bool.random(using: &generator)
                if Bool.random(using: &generator) { component.options.caseSensitive = false }
                return LinkRule(component: component)
            }
            let path = "/" + random(Int.random(in: 0...7, using: &generator)).replacingAll("*", with: "x").replacingAll("?", with: "q")
            let fast = LinkMatcher(rules: rules)
            #expect(fast.plain != nil)
            let found = fast.match(path: path, query: nil)
            let decided = fast.matcher.match("https://link.invalid" + path, explainingMisses: false)
            let expected = decided.app == nil ? nil : decided.decidedBy?.ruleIndex
            #expect(found?.rule == expected, "\(rules.map { $0.component.summary }) \(path)")
            if let found, let pattern = rules[found.rule].component.path {
                var rebuilt = ""
                var captures = found.captures.makeIterator()
                for character in pattern { rebuilt += character == "*" || character == "?" ? captures.next() ?? "#" : String(character) }
                let same =
                    rules[found.rule].component.options.caseSensitive == false ? rebuilt.lowercased() == path.lowercased() : rebuilt == path
                #expect(same, "\(pattern) \(path) \(found.captures)")
            }
        }
    }

    @Test(
        "With query and fragment patterns too, the byte matcher decides exactly as the AASA matcher on 20,000 random rule sets and URLs, handing what it cannot judge to it"
    )
    func queryRulesAgreeWithMatcher() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "b", "A", "*", "?", "%", "=", "&", "2"]
        func random(_ length: Int) -> String { String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }) }
        func text(_ length: Int) -> String { random(length).replacingAll("*", with: "x").replacingAll("?", with: "q") }
        var judgedByBytes = 0
        for _ in 0..<20_000 {
            let rules = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                var component = Component()
                if Int.random(in: 0..<4, using: &generator) > 0 { component.path = "/" + random(Int.random(in: 0...3, using: &generator)) }
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: component.query = .whole(random(Int.random(in: 0...4, using: &generator)).replacingAll("&", with: "b"))
                case 1:
                    component.query = .items(
                        (0..<Int.random(in: 1...2, using: &generator)).map { _ in
                            let name = text(Int.random(in: 1...2, using: &generator)).replacingAll("&", with: "a").replacingAll(
                                "=",
                                with: "b"
                            )
                            return QueryItemPattern(name: name, pattern: random(Int.random(in: 0...3, using: &generator)))
                        }
                    )
                default: break
                }
                if Int.random(in: 0..<8, using: &generator) == 0 { component.fragment = Bool.random(using: &generator) ? "*" : "a" }
                component.exclude = Int.random(in: 0..<4, using: &generator) == 0
                if Bool.random(using: &generator) { component.options.caseSensitive = false }
                return LinkRule(component: component)
            }
            let path = "/" + text(Int.random(in: 0...4, using: &generator)).replacingAll("&", with: "a").replacingAll("=", with: "b")
            let query = Bool.random(using: &generator) ? text(Int.random(in: 0...8, using: &generator)) : nil
            let fast = LinkMatcher(rules: rules)
            #expect(fast.plain != nil && fast.general == nil)
            let found = fast.match(path: path, query: query)
            let decided = fast.matcher.match("https://link.invalid" + path + (query.map { "?" + $0 } ?? ""), explainingMisses: false)
            let expected = decided.app == nil ? nil : decided.decidedBy?.ruleIndex
            #expect(found?.rule == expected, "\(rules.map { $0.component.summary }) \(path) \(query ?? "-")")
            if found?.rule != expected { return }
            var pathText = path
            if let plain = fast.plain, fast.matchBytes(plain, &pathText, query: query) != nil { judgedByBytes += 1 }
        }
        // Only query item names with '%' go to the general matcher: most requests are judged on bytes.
        #expect(judgedByBytes > 12_000, "\(judgedByBytes) of 20,000 judged on bytes")
    }

    @Test("The site's association is generated from its links: the reserved space excluded, web-only rules left out, Android from the app")
    func generatedAssociation() throws {
        let decoded = ConfigDecoder.decode(Array(Self.config.utf8))
        let site = try #require(decoded.config?.sites.first)
        guard case .generated(let generated) = site.source, let details = generated.applinks?.details.first else {
            Issue.record("no generated applinks")
            return
        }
        #expect(details.apps.map(\.value) == ["ABCDE12345.com.example.shop"])
        let paths = details.components.map { ($0.path ?? "", $0.exclude) }
        #expect(paths.map(\.0) == ["/_/*", "/admin/*", "/p/*", "/promo", "/fb/*", "/a/*/b/?", "/*"])
        #expect(paths.first?.1 == true)
        guard case .generated(let android)? = site.android else {
            Issue.record("no Android statements")
            return
        }
        #expect(android.map(\.package.value) == ["com.example.shop"])
    }

    @Test("Desktop: the web destination with the captures; a crawler: a preview page, never a redirect")
    func desktopAndCrawler() throws {
        #expect(try Self.decide("/p/42", .desktop) == .redirect("https://shop.example.com/item/42", .web))
        guard case .page(let preview, .preview)? = try Self.decide("/p/42", .crawler("Slack")) else {
            Issue.record("crawler got no preview")
            return
        }
        #expect(preview.kind == .preview && preview.title == "A product" && preview.image == "https://cdn.example.com/p.png")
        #expect(preview.deepLink == "https://example.com/product/42")
    }

    @Test("iPhone: the landing page with the Smart App Banner, open-host and App Store buttons; straightToStore with tokens; fallbacks")
    func iOS() throws {
        guard case .page(let page, .landing)? = try Self.decide("/p/42", query: "ref=mail", .iPhone) else {
            Issue.record("no landing page")
            return
        }
        #expect(page.smartBanner)
        #expect(
            page.buttons.map(\.url) == [
                "https://open.example.com/p/42?ref=mail", "https://apps.apple.com/app/id123456789", "https://shop.example.com/item/42",
            ]
        )
        #expect(try Self.decide("/promo", .iPhone) == .redirect("https://apps.apple.com/app/id123456789?ct=spring%20sale", .store))
        #expect(try Self.decide("/fb/x", .iPhone) == .redirect("https://m.example.com/ios/x", .fallback))
        #expect(try Self.decide("/fb/x", .iPad) == .redirect("https://m.example.com/ipad/x", .fallback))
    }

    @Test("Android: the Play Store with the deep link as referrer; a fallback; a landing page with Chrome's intent URL")
    func android() throws {
        #expect(
            try Self.decide("/p/42", .android)
                == .redirect(
                    "https://play.google.com/store/apps/details?id=com.example.shop&referrer=https%3A%2F%2Fexample.com%2Fproduct%2F42",
                    .store
                )
        )
        #expect(try Self.decide("/fb/y", .android) == .redirect("https://m.example.com/android/y", .fallback))
        guard case .page(let page, .landing)? = try Self.decide("/a/1/b/2", .android) else {
            Issue.record("no Android landing page")
            return
        }
        let intent = try #require(page.buttons.first?.url)
        #expect(intent.hasPrefix("intent://go.example.com/a/1/b/2#Intent;scheme=https;package=com.example.shop;i.amv=42;"), "\(intent)")
        #expect(
            intent.hasSuffix(
                ";S.browser_fallback_url=https%3A%2F%2Fplay.google.com%2Fstore%2Fapps%2Fdetails%3Fid%3Dcom.example.shop%26referrer%3Dhttps%253A%252F%252Fgo.example.com%252Fa%252F1%252Fb%252F2;end"
            ),
            "\(intent)"
        )
        #expect(page.smartBanner == false)
    }

    @Test("In-app browsers get a page offering the app and the browser, with the platform's buttons, never a store redirect")
    func inAppBrowsers() throws {
        guard case .page(let page, .inApp)? = try Self.decide("/promo", .inAppBrowser("Instagram", onIOS: true)) else {
            Issue.record("no in-app page")
            return
        }
        #expect(page.kind == .inAppBrowser("Instagram"))
        #expect(page.buttons.contains { $0.url == "https://apps.apple.com/app/id123456789?ct=spring%20sale" })
        guard case .page(let androidPage, .inApp)? = try Self.decide("/p/1", .inAppBrowser("Facebook", onIOS: false)) else {
            Issue.record("no in-app page")
            return
        }
        #expect(androidPage.buttons.first?.url.hasPrefix("intent://") == true)
    }

    @Test("A capture can move a visitor within the destination's site, never to another: bytes a URL may not carry are encoded")
    func templateSafety() throws {
        let template = try LinkTemplate.parse("https://shop.example.com/item/{1}?q={query}").get()
        let url = template.expand(captures: [#"a\b"<c>"#], path: "/p", query: "x=1 2")
        #expect(url == "https://shop.example.com/item/a%5Cb%22%3Cc%3E?q=x=1%202")
        // Nothing to encode (the copying path) and non-ASCII (encoded byte by byte), beside each other.
        #expect(
            template.expand(captures: ["42"], path: "/p", query: "utm_source=mail&x=%41")
                == "https://shop.example.com/item/42?q=utm_source=mail&x=%41"
        )
        #expect(template.expand(captures: ["é"], path: "/p", query: nil) == "https://shop.example.com/item/%C3%A9?q=")
        #expect(template.expand(captures: [], path: "/p", query: nil) == "https://shop.example.com/item/?q=")
        #expect(template.host == "shop.example.com")
        let wholePath = try LinkTemplate.parse("https://shop.example.com{path}").get()
        #expect(wholePath.expand(captures: [], path: "//evil.example/x", query: nil) == "https://shop.example.com//evil.example/x")
        #expect(wholePath.host == "shop.example.com")
        #expect(
            try LinkTemplate.parse("https://help.example.com").get().expand(captures: [], path: "/x", query: nil)
                == "https://help.example.com"
        )
        for bad in [
            "{path}", "https://{1}.example.com/", "//evil.example/{1}", "https://a.com/{x}", "https://a.com/{1", "javascript:alert(1)",
            "https://a.com{1}", "https://a.com{query}", "https://user@a.com/{1}",
        ] {
            #expect((try? LinkTemplate.parse(bad).get()) == nil, "\(bad)")
        }
    }

    static func findings(
        _ linksJSON: String,
        apps: String = #"{"shop": {"apple": "ABCDE12345.com.example.shop"}}"#,
        hosts: String = #"["go.example.com"]"#
    )
        -> [Diagnostic]
    {
        let text = #"{"version": 1, "apps": \#(apps), "sites": [{"hosts": \#(hosts), "links": \#(linksJSON)}]}"#
        return ConfigDecoder.decode(Array(text.utf8)).diagnostics
    }

    @Test("Validation names the rule: captures, templates, no store, the well-known and reserved paths, the open host")
    func validation() throws {
        func rules(_ json: String) -> [String] { Self.findings(json).filter { $0.severity == .error }.map(\.rule) }
        #expect(rules(#"{"app": "shop", "rules": [{"/": "/p/*", "web": "https://a.example/{2}"}]}"#).contains("links.capture"))
        #expect(rules(#"{"app": "shop", "rules": [{"/": "/p/*", "web": "a.example/{1}"}]}"#).contains("links.template"))
        #expect(rules(#"{"app": "shop", "rules": [{"/": "/p/*"}]}"#).contains("links.no-store"))
        let warned = Self.findings(#"{"app": "shop", "rules": [{"/": "/p/*", "web": "https://a.example/"}]}"#)
        #expect(warned.contains { $0.rule == "links.no-store" && $0.severity == .warning })
        #expect(rules(#"{"rules": [{"/": "/p/*"}]}"#).contains("links.no-destination"))
        #expect(rules(#"{"app": "shop", "rules": [{"/": "/.well-known/*", "web": "https://a.example/"}]}"#).contains("links.well-known"))
        #expect(rules(#"{"app": "shop", "rules": [{"/": "/_/x", "web": "https://a.example/"}]}"#).contains("links.reserved"))
        #expect(
            rules(#"{"app": "shop", "openHost": "go.example.com", "rules": [{"/": "/*", "web": "https://a.example/"}]}"#).contains(
                "links.open-host"
            )
        )
        #expect(rules(#"{"app": "shpo", "rules": [{"/": "/*", "web": "https://a.example/"}]}"#).contains("app.unknown"))
        #expect(rules(#"{"app": "shop", "rules": [{"/": "/*", "web": "https://a.example/", "iso": {}}]}"#).contains("key.unknown"))
        #expect(
            rules(#"{"app": "shop", "landingPage": "", "rules": [{"/": "/*", "web": "https://a.example/"}]}"#) == ["links.landing-page"]
        )
        // An origin goes into a header: a path, a space or a ';' would change the policy.
        for origin in ["http://media.example.com", "https://media.example.com/img", "https://a.example; script-src *", "media.example.com"]
        {
            let json = #"{"app": "shop", "imageOrigins": ["\#(origin)"], "rules": [{"/": "/*", "web": "https://a.example/"}]}"#
            #expect(rules(json) == ["links.image-origin"], "\(origin)")
        }
        // A good one is quiet.
        #expect(rules(#"{"app": "shop", "rules": [{"/": "/*", "ios": {"fallback": "https://a.example/{path}"}}]}"#).isEmpty)
        #expect(
            rules(
                #"{"app": "shop", "imageOrigins": ["https://media.example.com:8443"], "rules": [{"/": "/*", "web": "https://a.example/"}]}"#
            )
            .isEmpty
        )
        let badID = Self.findings(
            #"{"app": "shop", "rules": [{"/": "/*"}]}"#,
            apps: #"{"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": "id12"}}"#
        )
        #expect(badID.contains { $0.rule == "app.store-id" && $0.path == "$.apps.shop.appStoreID" })
    }
}

/// Android 15+ dynamic App Links from a link site's rules, and the same rules read back and checked in
/// any assetlinks.json.
@Suite("Dynamic App Links: generated from link rules, checked in statement lists")
struct DynamicAppLinksTests {
    @Test(
        "The links' app gets the site's link rules as dynamic_app_link_components, reserved space first, on its handle_all_urls statement"
    )
    func generated() throws {
        let decoded = ConfigDecoder.decode(Array(LinkRoutingTests.config.utf8))
        guard case .generated(let apps)? = decoded.config?.sites.first?.android else {
            Issue.record("no Android apps")
            return
        }
        let text = String(decoding: AssetLinksGenerator.bytes(for: apps), as: UTF8.self)
        #expect(
            text.contains(
                #""relation_extensions":{"delegate_permission/common.handle_all_urls":{"dynamic_app_link_components":[{"/":"/_/*","exclude":true},{"/":"/admin/*","exclude":true},{"/":"/p/*"},{"/":"/promo"},{"/":"/fb/*"},{"/":"/a/*/b/?"},{"/":"/*"}]}}"#
            ),
            "\(text)"
        )
        // The generated file passes its own checks, dynamic rules included.
        let reread = AssetLinksDecoder.decode(try #require(JSONParser.parse(Array(text.utf8)).root))
        #expect(!reread.diagnostics.contains { $0.severity == .error }, "\(reread.diagnostics)")
        #expect(reread.statements?.first?.dynamicComponents?.count == 7)
    }

    @Test("A rule Android cannot express leaves the file without dynamic rules, with a warning naming it")
    func inexpressible() {
        let text = #"""
            {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 1,
              "android": {"package": "com.example.shop", "sha256": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]}}},
             "sites": [{"hosts": ["go.example.com"], "links": {"app": "shop", "rules": [{"/": "/P/*", "caseSensitive": false}]}}]}
            """#
        let decoded = ConfigDecoder.decode(Array(text.utf8))
        #expect(decoded.diagnostics.contains { $0.rule == "links.android-dynamic" && $0.path == "$.sites[0].links.rules[0]" })
        guard case .generated(let apps)? = decoded.config?.sites.first?.android else {
            Issue.record("no Android apps")
            return
        }
        #expect(apps.first?.dynamicComponents == nil)
    }

    @Test("Malformed dynamic rules in a statement list are errors naming the field (Android discards them all)")
    func malformed() throws {
        let text = #"""
            [{"relation": ["delegate_permission/common.handle_all_urls"],
              "target": {"namespace": "android_app", "package_name": "com.example.shop", "sha256_cert_fingerprints": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]},
              "relation_extensions": {"delegate_permission/common.handle_all_urls": {"dynamic_app_link_components": [{"/": "/p/*"}, {"?": "dl=*"}, {"/": "/x", "exlude": true}, {}, {"exclude": "yes"}]}}}]
            """#
        let decoded = AssetLinksDecoder.decode(try #require(JSONParser.parse(Array(text.utf8)).root))
        let paths = decoded.diagnostics.filter { $0.rule == "assetlinks.dynamic-rule" }.compactMap(\.path)
        let base = #"$[0].relation_extensions["delegate_permission/common.handle_all_urls"].dynamic_app_link_components"#
        #expect(paths == [base + #"[1]["?"]"#, base + "[2].exlude", base + "[3]", base + "[4].exclude"], "\(paths)")
    }
}
