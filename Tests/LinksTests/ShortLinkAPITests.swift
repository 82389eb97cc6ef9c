import AASA
import Testing

@testable import Links

/// The link API's pure side: which call a request is, what a creation request may store (a link domain of
/// the config, destinations on its allowlist, the site's own app), and the JSON of its answers.
@Suite("Link API: calls, creation checks, answers")
struct ShortLinkAPITests {
    static let config: LoadedConfig = {
        let text = #"""
            {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 123456789}},
             "sites": [{"hosts": ["go.example.com"], "links": {"app": "shop", "openHost": "open.example.com", "allow": ["example.com"],
                        "rules": [{"/": "/p/*", "web": "https://example.com/item/{1}"}]}},
                       {"hosts": ["open.example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/*"}]}]}}]}
            """#
        let loaded = ConfigLoader.load(
            configBytes: Array(text.utf8),
            configPath: "/c.json",
            readFile: { _ in .failure(FileReadError("none")) }
        )
        precondition(!loaded.hasErrors, "\(loaded.diagnostics)")
        return loaded
    }()

    static func creation(_ body: String) -> Result<ShortLinkAPI.Creation, ShortLinkAPI.Problem> {
        ShortLinkAPI.creation(body: Array(body.utf8), config: config)
    }

    @Test("Calls by method and path; a known resource with another method is 405; anything else is no call")
    func calls() {
        #expect(ShortLinkAPI.call(method: "POST", path: "/v1/shortLinks") == .success(.create))
        #expect(
            ShortLinkAPI.call(method: "GET", path: "/v1/links/Go.Example.com/abc")
                == .success(.read(domain: "go.example.com", suffix: "abc"))
        )
        #expect(
            ShortLinkAPI.call(method: "DELETE", path: "/v1/links/go.example.com/abc")
                == .success(.change(domain: "go.example.com", suffix: "abc", .deleted))
        )
        #expect(
            ShortLinkAPI.call(method: "POST", path: "/v1/links/go.example.com/abc/disable")
                == .success(.change(domain: "go.example.com", suffix: "abc", .disabled))
        )
        #expect(
            ShortLinkAPI.call(method: "POST", path: "/v1/links/go.example.com/abc/enable")
                == .success(.change(domain: "go.example.com", suffix: "abc", .active))
        )
        #expect(ShortLinkAPI.call(method: "POST", path: "/v1/links") == .success(.createNative))
        #expect(
            ShortLinkAPI.call(method: "GET", path: "/v1/links")
                == .success(.list(domain: nil, afterDomain: "", afterSuffix: "", limit: ShortLinkAPI.pageSize))
        )
        #expect(
            ShortLinkAPI.call(method: "GET", path: "/v1/links", query: "domain=Go.example.com&after=go.example.com%2Fabc&limit=50")
                == .success(.list(domain: "go.example.com", afterDomain: "go.example.com", afterSuffix: "abc", limit: 50))
        )
        #expect(
            ShortLinkAPI.call(method: "GET", path: "/v1/links/go.example.com/abc/history")
                == .success(.history(domain: "go.example.com", suffix: "abc"))
        )
        #expect(
            ShortLinkAPI.call(method: "GET", path: "/v1/links/go.example.com/abc/clicks", query: "days=30")
                == .success(.clicks(domain: "go.example.com", suffix: "abc", days: 30))
        )
        for query in ["limit=10001", "limit=x", "after=abc", "order=desc"] {
            guard case .failure(let problem)? = ShortLinkAPI.call(method: "GET", path: "/v1/links", query: query) else {
                Issue.record("GET /v1/links?\(query) is not refused")
                continue
            }
            #expect(problem.status == 400, "\(query)")
        }
        #expect(
            ShortLinkAPI.call(method: "PATCH", path: "/v1/links/Go.example.com/abc")
                == .success(.update(domain: "go.example.com", suffix: "abc"))
        )
        #expect(ShortLinkAPI.call(method: "GET", path: "/v1/domains/Go.Example.com") == .success(.domainState(domain: "go.example.com")))
        #expect(
            ShortLinkAPI.call(method: "POST", path: "/v1/domains/go.example.com/disable")
                == .success(.domainSwitch(domain: "go.example.com", disabled: true))
        )
        #expect(
            ShortLinkAPI.call(method: "POST", path: "/v1/domains/go.example.com/enable")
                == .success(.domainSwitch(domain: "go.example.com", disabled: false))
        )
        for (method, path) in [
            ("GET", "/v1/shortLinks"), ("PUT", "/v1/links/go.example.com/abc"), ("GET", "/v1/links/go.example.com/abc/disable"),
            ("PUT", "/v1/links"), ("POST", "/v1/links/go.example.com/abc/history"), ("DELETE", "/v1/domains/go.example.com"),
            ("GET", "/v1/domains/go.example.com/disable"),
        ] {
            guard case .failure(let problem)? = ShortLinkAPI.call(method: method, path: path) else {
                Issue.record("\(method) \(path) is not a 405")
                continue
            }
            #expect(problem.status == 405, "\(method) \(path)")
        }
        for path in [
            "/v1/", "/v1/domains", "/v1/domains/", "/v1/domains/go.example.com/off", "/v1/links/go.example.com", "/v1/links//abc",
            "/v1/links/go.example.com/abc/rename", "/v2/shortLinks",
            "/metrics",
        ] {
            #expect(ShortLinkAPI.call(method: "GET", path: path) == nil, "\(path)")
        }
    }

    @Test("FDL bodies of both shapes become the parameters a long link would carry, with the suffix option")
    func creations() throws {
        let info = try Self.creation(
            #"{"dynamicLinkInfo": {"domainUriPrefix": "https://go.example.com", "link": "https://example.com/a", "androidInfo": {"androidFallbackLink": "https://example.com/android"}}, "suffix": {"option": "SHORT"}}"#
        ).get()
        #expect(info.domain == "go.example.com" && info.suffix == .short)
        #expect(info.parameters == ["link": "https://example.com/a", "afl": "https://example.com/android"])
        let long = try Self.creation(#"{"longDynamicLink": "https://go.example.com/?link=https%3A%2F%2Fexample.com%2Fb&st=Hi"}"#).get()
        #expect(long.parameters == ["link": "https://example.com/b", "st": "Hi"] && long.suffix == .unguessable)
    }

    @Test("Refusals name the JSON path and why: off the allowlist, not a link domain, another app, bad JSON")
    func refusals() {
        func problem(_ body: String) -> ShortLinkAPI.Problem? {
            if case .failure(let problem) = Self.creation(body) { return problem }
            return nil
        }
        let off = problem(
            #"{"dynamicLinkInfo": {"domainUriPrefix": "https://go.example.com", "link": "https://example.com/a", "iosInfo": {"iosFallbackLink": "https://evil.example/x"}}}"#
        )
        #expect(off?.status == 400 && off?.path == "$.dynamicLinkInfo.iosInfo.iosFallbackLink")
        #expect(off?.detail == "ifl points at evil.example, which this site's links.allow does not list")
        let longOff = problem(#"{"longDynamicLink": "https://go.example.com/?link=https%3A%2F%2Fevil.example%2F"}"#)
        #expect(longOff?.path == "$.longDynamicLink" && longOff?.detail.contains("evil.example") == true)
        let notLinks = problem(#"{"dynamicLinkInfo": {"domainUriPrefix": "https://open.example.com", "link": "https://example.com/a"}}"#)
        #expect(
            notLinks?.status == 400 && notLinks?.path == "$.dynamicLinkInfo.domainUriPrefix"
                && notLinks?.detail.contains("open.example.com") == true
        )
        let otherApp = problem(
            #"{"dynamicLinkInfo": {"domainUriPrefix": "https://go.example.com", "link": "https://example.com/a", "iosInfo": {"iosBundleId": "com.other.app"}}}"#
        )
        #expect(otherApp?.path == "$.dynamicLinkInfo.iosInfo.iosBundleId" && otherApp?.detail.contains("com.example.shop") == true)
        let broken = problem(#"{"dynamicLinkInfo": "#)
        #expect(broken?.status == 400 && broken?.path == "$" && broken?.detail.contains("not valid JSON") == true)
        let typo = problem(
            #"{"dynamicLinkInfo": {"domainUriPrefix": "https://go.example.com", "link": "https://example.com/a", "iosInfo": {"iosFallbakLink": "x"}}}"#
        )
        #expect(typo?.path == "$.dynamicLinkInfo.iosInfo.iosFallbakLink")
    }

    @Test("The API's own body: an alias, the shortest free suffix or an unguessable one; every other shape refused at its path")
    func nativeBodies() throws {
        func creation(_ body: String) -> Result<ShortLinkAPI.Creation, ShortLinkAPI.Problem> {
            ShortLinkAPI.creation(body: Array(body.utf8), config: Self.config, native: true)
        }
        let alias = try creation(
            #"{"domain": "Go.Example.com", "suffix": "spring-sale", "parameters": {"link": "https://example.com/a", "st": "Hi"}}"#
        ).get()
        #expect(
            alias
                == ShortLinkAPI.Creation(
                    domain: "go.example.com",
                    parameters: ["link": "https://example.com/a", "st": "Hi"],
                    suffix: .alias("spring-sale")
                )
        )
        #expect(
            try creation(#"{"domain": "go.example.com", "short": true, "parameters": {"link": "https://example.com/a"}}"#).get().suffix
                == .short
        )
        #expect(
            try creation(#"{"domain": "go.example.com", "parameters": {"link": "https://example.com/a"}}"#).get().suffix == .unguessable
        )
        for (body, path, words) in [
            (#"{"domain": "go.example.com", "parameters": {"link": "https://example.com/a"}, "ttl": 1}"#, "$.ttl", "not a field"),
            (#"{"parameters": {"link": "https://example.com/a"}}"#, "$.domain", "required"),
            (#"{"domain": "go.example.com"}"#, "$.parameters", "required"),
            (#"{"domain": "go.example.com", "parameters": {"st": "x"}}"#, "$.parameters.link", "required"),
            (#"{"domain": "go.example.com", "parameters": {"link": 3}}"#, "$.parameters.link", "must be a string"),
            (
                #"{"domain": "go.example.com", "suffix": "a/b", "parameters": {"link": "https://example.com/a"}}"#, "$.suffix",
                "letters, digits"
            ),
            (
                #"{"domain": "go.example.com", "suffix": "favicon", "parameters": {"link": "https://example.com/a"}}"#, "$.suffix",
                "reserved"
            ),
            (
                #"{"domain": "go.example.com", "suffix": "x", "short": true, "parameters": {"link": "https://example.com/a"}}"#, "$.short",
                "send one"
            ),
            (#"{"domain": "go.example.com", "short": "yes", "parameters": {"link": "https://example.com/a"}}"#, "$.short", "true or false"),
            (#"{"domain": "go.example.com", "parameters": {"link": "https://evil.example/a"}}"#, "$.parameters.link", "links.allow"),
            (#"{"domain": "open.example.com", "parameters": {"link": "https://example.com/a"}}"#, "$.domain", "not a link domain"),
            (#"{"domain": "go.example.com", "domain": "x", "parameters": {}}"#, "$", "not valid JSON"),
            ("[]", "$", "JSON object"),
        ] {
            guard case .failure(let problem) = creation(body) else {
                Issue.record("accepted: \(body)")
                continue
            }
            #expect(problem.status == 400 && problem.path == path && problem.detail.contains(words), "\(body): \(problem)")
        }
    }

    @Test("A domain's kill switch as JSON: since when, only while it is off")
    func domainState() {
        #expect(ShortLinkAPI.domainJSON("go.example.com", disabledSince: nil) == #"{"domain":"go.example.com","disabled":false}"#)
        #expect(
            ShortLinkAPI.domainJSON("go.example.com", disabledSince: 1_764_806_400)
                == #"{"domain":"go.example.com","disabled":true,"since":"2025-12-04T00:00:00Z"}"#
        )
    }

    @Test("Answers: FDL's shortLinks shape, the native link, and RFC 9457 problems")
    func answers() {
        let link = StoredLink(
            domain: "go.example.com",
            suffix: "abc",
            parameters: ["link": "https://example.com/a"],
            created: 5,
            updated: 6
        )
        #expect(
            ShortLinkAPI.createdJSON(link)
                == #"{"shortLink":"https://go.example.com/abc","previewLink":"https://go.example.com/abc?d=1","warning":[]}"#
        )
        #expect(
            JSONWriter.string(ShortLinkAPI.linkJSON(link))
                == #"{"shortLink":"https://go.example.com/abc","domain":"go.example.com","suffix":"abc","state":"active","parameters":{"link":"https://example.com/a"},"created":5,"updated":6}"#
        )
        let problem = ShortLinkAPI.Problem(status: 400, title: "Link refused", detail: "a \"quoted\" reason", path: "$.x")
        #expect(problem.json == #"{"type":"about:blank","title":"Link refused","status":400,"detail":"a \"quoted\" reason","path":"$.x"}"#)
    }

    @Test(
        "linkStats: FDL's path and ours, durationDays required and bounded; people's clicks by platform, redirects apart, bots and HEAD left out"
    )
    func linkStats() {
        #expect(
            ShortLinkAPI.call(method: "GET", path: "/v1/https%3A%2F%2Fgo.example.com%2Fabc/linkStats", query: "durationDays=7")
                == .success(.stats(domain: "go.example.com", suffix: "abc", days: 7))
        )
        #expect(
            ShortLinkAPI.call(method: "GET", path: "/v1/links/go.example.com/abc/linkStats", query: "x=1&durationDays=30")
                == .success(.stats(domain: "go.example.com", suffix: "abc", days: 30))
        )
        for query in [nil, "durationDays=0", "durationDays=seven", "durationDays=3651"] {
            guard
                case .failure(let problem)? = ShortLinkAPI.call(method: "GET", path: "/v1/links/go.example.com/abc/linkStats", query: query)
            else {
                Issue.record("\(query ?? "no query") accepted")
                continue
            }
            #expect(problem.status == 400)
        }
        #expect(ShortLinkAPI.call(method: "GET", path: "/v1/not-a-link/linkStats", query: "durationDays=7") == nil)
        let rows = [
            ShortLinkAPI.ClickRow(day: "2026-12-03", visitor: "iphone", outcome: "landing", head: false, count: 4),
            ShortLinkAPI.ClickRow(day: "2026-12-04", visitor: "ipad", outcome: "store", head: false, count: 1),
            ShortLinkAPI.ClickRow(day: "2026-12-04", visitor: "android", outcome: "store", head: false, count: 2),
            ShortLinkAPI.ClickRow(day: "2026-12-04", visitor: "desktop", outcome: "web", head: true, count: 9),
            ShortLinkAPI.ClickRow(day: "2026-12-04", visitor: "crawler", outcome: "preview", head: false, count: 5),
            ShortLinkAPI.ClickRow(day: "2026-12-04", visitor: "in-app", outcome: "in-app", head: false, count: 1),
            // What apps claimed and reported: FDL's app events, never clicks.
            ShortLinkAPI.ClickRow(day: "2026-12-04", visitor: "android", outcome: "install", head: false, count: 1),
            ShortLinkAPI.ClickRow(day: "2026-12-04", visitor: "ios", outcome: "install", head: false, count: 1),
            ShortLinkAPI.ClickRow(day: "2026-12-04", visitor: "ios", outcome: "first-open", head: false, count: 4),
            ShortLinkAPI.ClickRow(day: "2026-12-04", visitor: "other", outcome: "re-open", head: false, count: 5),
        ]
        #expect(
            ShortLinkAPI.linkStatsJSON(rows)
                == #"{"linkEventStats":[{"platform":"ANDROID","count":"2","event":"CLICK"},{"platform":"ANDROID","count":"2","event":"REDIRECT"},"#
                + #"{"platform":"ANDROID","count":"1","event":"APP_INSTALL"},"#
                + #"{"platform":"IOS","count":"5","event":"CLICK"},{"platform":"IOS","count":"1","event":"REDIRECT"},"#
                + #"{"platform":"IOS","count":"1","event":"APP_INSTALL"},{"platform":"IOS","count":"4","event":"APP_FIRST_OPEN"},"#
                + #"{"platform":"OTHER","count":"1","event":"CLICK"},{"platform":"OTHER","count":"5","event":"APP_RE_OPEN"}]}"#
        )
        #expect(ShortLinkAPI.linkStatsJSON([]) == #"{"linkEventStats":[]}"#)
    }

    @Test("The reading answers read back as written: a page, a history, counts; anything else is nil")
    func readingRoundTrip() throws {
        func root(_ text: String) throws -> JSONNode { try #require(JSONParser.parse(Array(text.utf8)).root) }
        var link = StoredLink(
            domain: "go.example.com",
            suffix: "spring",
            parameters: ["link": "https://example.com/a", "st": "A \"title\""]
        )
        link.created = 1_800_000_000
        link.updated = 1_800_000_100
        let disabled = StoredLink(domain: "go.example.com", suffix: "off", parameters: ["link": "https://example.com/b"], state: .disabled)
        let written = try root(ShortLinkAPI.pageJSON([link, disabled], disabledDomains: ["x.example.com": 7], next: disabled))
        let page = try #require(ShortLinkAPI.page(written))
        #expect(page.links == [link, disabled] && page.disabledDomains == ["x.example.com": 7] && page.next == "go.example.com/off")
        let last = try root(ShortLinkAPI.pageJSON([], disabledDomains: [:], next: nil))
        #expect(ShortLinkAPI.page(last).map { $0.links.isEmpty && $0.next == nil } == true)

        let entries: [ShortLinkAPI.HistoryEntry] = [(1, "created", ["link": "https://example.com/a"]), (2, "updated", [:])]
        let history = try #require(
            ShortLinkAPI.history(try root(ShortLinkAPI.historyJSON(link, entries)))
        )
        #expect(
            history.map(\.at) == [1, 2] && history.map(\.change) == ["created", "updated"] && history[0].parameters == entries[0].parameters
        )

        let rows = [ShortLinkAPI.ClickRow(day: "2026-12-04", visitor: "iphone", outcome: "store", head: false, count: 3)]
        let counts = try root(ShortLinkAPI.clicksJSON(link, rows))
        #expect(ShortLinkAPI.clickRows(counts) == rows)

        for text in [
            #"{"links": [{"domain": "a"}], "disabledDomains": []}"#, #"{"history": [{"at": "soon"}]}"#, #"{"clicks": [{"day": 1}]}"#, "[]",
        ] {
            let node = try root(text)
            #expect(ShortLinkAPI.page(node) == nil && ShortLinkAPI.history(node) == nil && ShortLinkAPI.clickRows(node) == nil, "\(text)")
        }
    }
}
