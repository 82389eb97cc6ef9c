import Testing

@testable import AASA
@testable import Links

/// FDL long links: FDL's parameters routed as FDL documented, and every URL they carry held to the
/// site's allowlist and the site's own app — refusals name the parameter, never redirect.
@Suite("Firebase Dynamic Links long links and the destination allowlist")
struct FirebaseLongLinkTests {
    static func links(allow: [String] = ["example.com", "https://shop.example.com/app/", "*.cdn.example.net"]) -> SiteLinks {
        SiteLinks(
            app: LinkApp(
                name: "shop",
                appleID: "ABCDE12345.com.example.shop",
                appStoreID: "123456789",
                androidPackage: "com.example.shop"
            ),
            openHost: nil,
            rules: [],
            firebaseLongLinks: true,
            allow: DestinationAllowlist(entries: allow.compactMap { try? DestinationAllowlist.entry($0).get() }),
            origin: .none
        )
    }

    static func parse(_ query: String) -> Result<FirebaseLongLink.Parsed, FirebaseLongLink.Refusal> {
        FirebaseLongLink.parse(query: query, links: links(), ownHosts: ["go.example.com"])
    }

    static func refusal(_ query: String) -> FirebaseLongLink.Refusal? {
        if case .failure(let refusal) = parse(query) { return refusal }
        return nil
    }

    static func decide(_ query: String, _ visitor: Visitor) throws -> LinkDecision {
        let parsed = try parse(query).get()
        return LinkRouting.decide(
            parsed.rule,
            captures: [],
            links: links(),
            request: LinkRequest(host: "go.example.com", path: "/", query: query, visitor: visitor)
        )
    }

    @Test(
        "FDL's flow: the stores with their tokens, ifl/ipfl/afl fallbacks, efr=1 straight to the App Store, ofl for desktops, link otherwise"
    )
    func flow() throws {
        let link = "link=https%3A%2F%2Fexample.com%2Fp%2F1"
        #expect(
            try Self.decide(link + "&apn=com.example.shop", .android)
                == .redirect(
                    "https://play.google.com/store/apps/details?id=com.example.shop&referrer=https%3A%2F%2Fexample.com%2Fp%2F1",
                    .store
                )
        )
        #expect(
            try Self.decide(link + "&afl=https%3A%2F%2Fshop.example.com%2Fapp%2Fa", .android)
                == .redirect("https://shop.example.com/app/a", .fallback)
        )
        #expect(try Self.decide(link + "&ifl=https%3A%2F%2Fexample.com%2Fi", .iPhone) == .redirect("https://example.com/i", .fallback))
        #expect(
            try Self.decide(link + "&ifl=https%3A%2F%2Fexample.com%2Fi&ipfl=https%3A%2F%2Fexample.com%2Fpad", .iPad)
                == .redirect("https://example.com/pad", .fallback)
        )
        #expect(
            try Self.decide(link + "&efr=1&isi=123456789&ct=spring&pt=99&at=1l3v&mt=8", .iPhone)
                == .redirect(
                    "https://apps.apple.com/app/id123456789?pt=99&ct=spring&at=1l3v&mt=8",
                    .store
                )
        )
        #expect(try Self.decide(link + "&ofl=https%3A%2F%2Fexample.com%2Fdesk", .desktop) == .redirect("https://example.com/desk", .web))
        #expect(try Self.decide(link, .desktop) == .redirect("https://example.com/p/1", .web))
        guard
            case .page(let page, .landing) = try Self.decide(
                link + "&st=Sale+%3Cnow%3E&sd=Half&si=https%3A%2F%2Fimg.cdn.example.net%2Fa.png",
                .iPhone
            )
        else {
            Issue.record("no landing page without efr")
            return
        }
        #expect(page.title == "Sale <now>" && page.description == "Half" && page.image == "https://img.cdn.example.net/a.png")
        #expect(page.deepLink == "https://example.com/p/1" && page.smartBanner)
        #expect(try Self.parse(link + "&d=1").get().debug)
    }

    @Test("No open redirect: encoded tricks, other schemes, user info, CR/LF, lookalike hosts and links to links are refused by parameter")
    func refusals() {
        let cases: [(String, String)] = [
            ("link=https%3A%2F%2Fevil.example%2F", "link"),
            ("link=https%3A%2F%2Fexample.com.evil.example%2F", "link"),
            ("link=https%3A%2F%2Fshop.example.com%2Fother", "link"),
            ("link=https%3A%2F%2Fshop.example.com.evil.example%2Fapp%2F", "link"),
            ("link=%2F%2Fevil.example%2F", "link"),
            ("link=https%3A%2F%2Fexample.com%5C%40evil.example", "link"),
            ("link=https%3A%2F%2Fuser%40example.com%2F", "link"),
            ("link=javascript%3Aalert(1)", "link"),
            ("link=https%3A%2F%2Fexample.com%2F%0D%0ALocation%3A%20https%3A%2F%2Fevil.example", "link"),
            ("link=https%3A%2F%2Fexample.com%2F%3Cscript%3E", "link"),
            ("link=https%3A%2F%2Fgo.example.com%2Fx", "link"),
            ("link=https%3A%2F%2Fexample.com%2F&afl=https%3A%2F%2Fevil.example%2F", "afl"),
            ("link=https%3A%2F%2Fexample.com%2F&ifl=http%3A%2F%2Fevil.example", "ifl"),
            ("link=https%3A%2F%2Fexample.com%2F&ofl=data%3Atext%2Fhtml%2Cx", "ofl"),
            ("link=https%3A%2F%2Fexample.com%2F&si=http%3A%2F%2Fexample.com%2Fi.png", "si"),
            ("link=https%3A%2F%2Fexample.com%2F&ibi=com.evil.app", "ibi"),
            ("link=https%3A%2F%2Fexample.com%2F&apn=com.evil.app", "apn"),
            ("link=https%3A%2F%2Fexample.com%2F&isi=1", "isi"),
            ("link=https%3A%2F%2Fexample.com%2F&amv=x", "amv"),
            ("link=https%3A%2F%2Fexample.com%2F&ct=" + String(repeating: "c", count: 41), "ct"),
            ("link=https%3A%2F%2Fexample.com%2F&link=https%3A%2F%2Fexample.com%2Fb", "link"),
            ("apn=com.example.shop", "link"),
            ("link=%E0%A4%A", "link=%E0%A4%A"),
        ]
        for (query, parameter) in cases {
            #expect(Self.refusal(query)?.parameter == parameter, "\(query): \(String(describing: Self.refusal(query)))")
        }
        let flood = (0..<2_000).map { "k\($0)=v" }.joined(separator: "&")
        #expect(Self.refusal("link=https%3A%2F%2Fexample.com%2F&" + flood)?.parameter == "(query)")
    }

    @Test("Allowlist entries: exact hosts, *.suffix hosts, URL prefixes compared by parts; bad entries say why")
    func allowlist() throws {
        let list = Self.links().allow
        func allows(_ text: String) -> Bool { CheckedURL(text).map(list.allows) ?? false }
        #expect(allows("https://example.com/anything"))
        #expect(allows("http://EXAMPLE.com"))
        #expect(!allows("https://www.example.com/"))
        #expect(allows("https://a.cdn.example.net/x") && !allows("https://cdn.example.net/x") && !allows("https://evilcdn.example.net/"))
        #expect(
            allows("https://shop.example.com/app/x") && !allows("https://shop.example.com/apple")
                && !allows("http://shop.example.com/app/x")
        )
        #expect(allows("https://example.com:8443/x"))
        for bad in ["", "exa mple.com", "*.com", "ftp://example.com/", "https:///path", "https://a@b.com/"] {
            #expect((try? DestinationAllowlist.entry(bad).get()) == nil, "\(bad)")
        }
    }

    @Test("Config: firebaseLongLinks needs allow; a bad allow entry is named; the generated AASA opens /?link=…")
    func config() throws {
        func decode(_ links: String) -> ConfigDecoder.Result {
            ConfigDecoder.decode(
                Array(
                    #"{"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 1}}, "sites": [{"hosts": ["go.example.com"], "links": \#(links)}]}"#
                        .utf8
                )
            )
        }
        #expect(decode(#"{"app": "shop", "firebaseLongLinks": true}"#).diagnostics.contains { $0.rule == "links.allowlist" })
        let bad = decode(#"{"app": "shop", "firebaseLongLinks": true, "allow": ["example.com", "not a host"]}"#)
        #expect(bad.diagnostics.contains { $0.rule == "links.allowlist" && $0.path == "$.sites[0].links.allow[1]" })
        let good = decode(#"{"app": "shop", "firebaseLongLinks": true, "allow": ["example.com"]}"#)
        #expect(!good.diagnostics.contains { $0.severity == .error }, "\(good.diagnostics)")
        guard case .generated(let site)? = good.config?.sites.first?.source else {
            Issue.record("no generated AASA")
            return
        }
        let matcher = Matcher(
            AASADocument(
                applinks: AppLinks(
                    details: site.applinks!.details.map {
                        AppLinksDetails(appIDs: $0.apps, components: $0.components)
                    }
                )
            )
        )
        #expect(matcher.match("https://go.example.com/?link=https%3A%2F%2Fexample.com%2F").app == "ABCDE12345.com.example.shop")
        #expect(matcher.match("https://go.example.com/_/link.css").app == nil)
    }
}
