import Support
import Testing

@testable import AASA
@testable import Links

/// What a short link is made of before it is stored: its suffix, an FDL short-link API request, a
/// Google Takeout export. Each becomes FDL's long-link parameters, checked by the one rule function.
@Suite("Short-link sources: suffixes and aliases, FDL's shortLinks request, the Takeout CSV")
struct ShortLinkSourcesTests {
    /// The long-link tests' site: FDL's sources are checked by the same rule function.
    static let links = FirebaseLongLinkTests.links(allow: ["example.com", "shop.example.com"])

    @Test("Unguessable suffixes: 17 base62 characters for every 96-bit value, distinct values distinct; SHORT grows only when taken")
    func suffixes() {
        #expect(ShortLinkSuffix.unguessable([UInt8](repeating: 0, count: 12)) == String(repeating: "0", count: 17))
        // 2^96 - 1 in base 62 (computed with Python's integers): 17 digits, the most any 96-bit value needs.
        let largest = ShortLinkSuffix.unguessable([UInt8](repeating: 0xFF, count: 12))
        #expect(largest.count == 17 && largest == "1f2SI9UJPXvb7vdJ1", "\(largest)")
        var generator = SystemRandomNumberGenerator()
        var seen = Set<String>()
        for _ in 0..<2_000 {
            let bytes = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let suffix = ShortLinkSuffix.unguessable(bytes)
            #expect(suffix.count == 17 && suffix.utf8.allSatisfy { ShortLinkSuffix.alphabet.contains($0) })
            seen.insert(suffix)
        }
        #expect(seen.count == 2_000)
        var counter: UInt64 = 0
        let first = ShortLinkSuffix.short(
            random: {
                counter += 1
                return counter
            },
            isTaken: { _ in false }
        )
        #expect(first.count == 4)
        // Every 4-character suffix taken: the next is 5 long.
        let longer = ShortLinkSuffix.short(random: { UInt64.random(in: 0...UInt64.max) }, isTaken: { $0.count == 4 })
        #expect(longer.count == 5)
    }

    @Test("Aliases: letters, digits, - and _; never the reserved space, a well-known name, empty or over 64")
    func aliases() {
        #expect(ShortLinkSuffix.aliasProblem("spring-sale_2026") == nil)
        for (alias, says) in [
            ("", "is empty"), ("a/b", "only letters"), ("a b", "only letters"), ("_x", "/_/"), ("Robots", "reserved"),
            ("apple-app-site-association", "reserved"), (String(repeating: "a", count: 65), "at most 64"), ("café", "only letters"),
            ("x'; DROP TABLE links;--", "only letters"),
        ] {
            #expect(
                ShortLinkSuffix.aliasProblem(alias)?.contains(says) == true,
                "\(alias): \(ShortLinkSuffix.aliasProblem(alias) ?? "nil")"
            )
        }
    }

    static func request(_ json: String) -> Result<FirebaseShortLinkRequest, FirebaseShortLinkRequest.Problem> {
        FirebaseShortLinkRequest.decode(Array(json.utf8))
    }

    @Test("FDL's dynamicLinkInfo and longDynamicLink become the same parameters and the same rule")
    func firebaseRequest() throws {
        let info = try Self.request(
            #"""
            {"dynamicLinkInfo": {"domainUriPrefix": "https://Go.Example.com", "link": "https://example.com/p/1",
              "androidInfo": {"androidPackageName": "com.example.shop", "androidFallbackLink": "https://shop.example.com/a",
                              "androidMinPackageVersionCode": "12"},
              "iosInfo": {"iosBundleId": "com.example.shop", "iosAppStoreId": "123456789"},
              "navigationInfo": {"enableForcedRedirect": true},
              "analyticsInfo": {"googlePlayAnalytics": {"utmSource": "mail"}, "itunesConnectAnalytics": {"ct": "spring"}},
              "socialMetaTagInfo": {"socialTitle": "Spring <sale>", "socialImageLink": "https://example.com/i.png"}},
             "suffix": {"option": "SHORT"}}
            """#
        ).get()
        #expect(info.domain == "go.example.com" && info.suffix == .short)
        #expect(
            info.parameters == [
                "link": "https://example.com/p/1", "apn": "com.example.shop", "afl": "https://shop.example.com/a", "amv": "12",
                "ibi": "com.example.shop", "isi": "123456789", "efr": "1", "utm_source": "mail", "ct": "spring", "st": "Spring <sale>",
                "si": "https://example.com/i.png",
            ]
        )
        let long = try Self.request(
            #"{"longDynamicLink": "https://go.example.com/?link=https%3A%2F%2Fexample.com%2Fp%2F1&apn=com.example.shop&amv=12&efr=1&ct=spring"}"#
        ).get()
        #expect(long.domain == "go.example.com" && long.suffix == .unguessable)
        let rule = try FirebaseLongLink.rule(info.parameters, links: Self.links, ownHosts: ["go.example.com"]).get().rule
        #expect(rule.deepLink?.value == "https://example.com/p/1" && rule.android.minVersionCode == 12 && rule.ios.straightToStore)
        #expect(rule.android.fallback?.value == "https://shop.example.com/a" && rule.preview?.title == "Spring <sale>")
        let longRule = try FirebaseLongLink.rule(long.parameters, links: Self.links, ownHosts: ["go.example.com"]).get().rule
        #expect(longRule.deepLink?.value == rule.deepLink?.value && longRule.ios.campaignToken == "spring")
        // The allowlist holds for every source: a fallback elsewhere is refused, naming it.
        var offList = info.parameters
        offList["afl"] = "https://evil.example/"
        guard case .failure(let refusal) = FirebaseLongLink.rule(offList, links: Self.links, ownHosts: []) else {
            Issue.record("an off-list fallback was accepted")
            return
        }
        #expect(refusal.parameter == "afl")
    }

    @Test("A refused request names the field: bad JSON, both forms, neither, unknown keys, a wrong suffix, no domain, wrong types")
    func firebaseProblems() {
        func problem(_ json: String) -> FirebaseShortLinkRequest.Problem? {
            if case .failure(let problem) = Self.request(json) { return problem }
            return nil
        }
        #expect(problem(#"{"longDynamicLink": "#)?.reason.hasPrefix("is not valid JSON (line 1") == true)
        #expect(problem(#"[]"#)?.path == "$")
        #expect(problem(#"{"longDynamicLink": "https://a.example/?link=x", "dynamicLinkInfo": {}}"#)?.reason.contains("both") == true)
        #expect(problem(#"{}"#)?.reason.contains("needs") == true)
        #expect(problem(#"{"dynamicLink": "x"}"#)?.path == "$.dynamicLink")
        #expect(problem(#"{"longDynamicLink": "https://a.example/?link=x", "suffix": {"option": "LONG"}}"#)?.path == "$.suffix")
        #expect(problem(#"{"dynamicLinkInfo": {"link": "https://example.com/"}}"#)?.path == "$.dynamicLinkInfo.domainUriPrefix")
        #expect(
            problem(#"{"dynamicLinkInfo": {"domainUriPrefix": "https://go.example.com", "iosInfo": {"iosBundleID": "x"}}}"#)?.path
                == "$.dynamicLinkInfo.iosInfo.iosBundleID"
        )
        #expect(
            problem(#"{"dynamicLinkInfo": {"domainUriPrefix": "https://go.example.com", "androidInfo": {"androidPackageName": ["x"]}}}"#)?
                .reason == "must be a string"
        )
        #expect(problem(#"{"dynamicLinkInfo": {"domainUriPrefix": "http://go.example.com"}}"#)?.reason.contains("https URL") == true)
        #expect(problem(String(repeating: " ", count: FirebaseShortLinkRequest.bodyLimit + 1))?.reason.contains("over") == true)
    }

    static let header =
        "Short Dynamic Link,Deep link (link),Android package name (apn),Android fallback link (afl),Minimum version (amv),"
        + "iOS bundle ID (ibi),iOS fallback link (ifl),Custom scheme (ius),iPad fallback link (ipfl),iPad bundle ID (ipbi),"
        + "App Store ID (isi),Minimum version (imv),Skip preview page (efr),Other platform fallback link (ofl),Social title (st),"
        + "Social description (sd),Social image link (si),utm_source,utm_medium,utm_campaign,utm_term,utm_content,"
        + "iTunes Connect affiliate token (at),Campaign token (ct),Media type (mt),Provider token (pt),Archived,Link name,Creation time"

    @Test("Takeout CSV: BOM, quoted commas, quotes and line breaks, CRLF; columns by code, a row of the wrong width skipped by line")
    func takeout() throws {
        let empty = String(repeating: ",", count: 27)
        let csv =
            "\u{FEFF}" + Self.header + "\r\n"
            + "https://go.example.com/abcd,https://example.com/p/1,com.example.shop,,,,,,,,,,1,,\"Sale, \"\"50%\"\"\",\"Two\nlines\",,mail,,,,,,spring,,,false,Spring,2024-03-01T10:00:00Z\r\n"
            + "https://go.example.com/old,https://example.com/old,,,,,,,,,,,,,,,,,,,,,,,,,true,,\n"
            + "https://go.example.com/short,only three\n"
            + "https://go.example.com/x,https://example.com/x\(empty)\n"
        let result = try TakeoutCSV.read(Array(csv.utf8)).get()
        #expect(result.rows.count == 3, "\(result)")
        let first = try #require(result.rows.first)
        #expect(first.line == 2 && first.shortLink == "https://go.example.com/abcd" && first.name == "Spring" && !first.archived)
        #expect(
            first.parameters == [
                "link": "https://example.com/p/1", "apn": "com.example.shop", "efr": "1", "st": "Sale, \"50%\"", "sd": "Two\nlines",
                "utm_source": "mail", "ct": "spring",
            ]
        )
        #expect(result.rows[1].line == 4 && result.rows[1].archived)
        #expect(result.skipped == [TakeoutCSV.Problem(line: 5, reason: "has 2 fields; the header has 29")])
        #expect(result.rows[2].line == 6 && result.rows[2].parameters == ["link": "https://example.com/x"])
        // The rows are checked like any long link.
        #expect((try? FirebaseLongLink.rule(first.parameters, links: Self.links, ownHosts: ["go.example.com"]).get()) != nil)
    }

    @Test("Takeout CSV problems: a header without the deep link names it, an unclosed quote names its line, no header read by position")
    func takeoutProblems() throws {
        let noLink = Self.header.replacingAll("Deep link (link)", with: "Something else")
        guard case .failure(let missing) = TakeoutCSV.read(Array((noLink + "\n").utf8)) else {
            Issue.record("a header without the deep link was read")
            return
        }
        #expect(missing.reason == "the header has no column for the deep link (link)")
        guard case .failure(let unclosed) = TakeoutCSV.read(Array((Self.header + "\nhttps://go.example.com/a,\"open\n\n").utf8)) else {
            Issue.record("an unclosed quote was read")
            return
        }
        #expect(unclosed.line == 2 && unclosed.reason.contains("never closed"))
        let positional = "https://go.example.com/a,https://example.com/a" + String(repeating: ",", count: 27) + "\n"
        let rows = try TakeoutCSV.read(Array(positional.utf8)).get().rows
        #expect(rows.count == 1 && rows.first?.parameters == ["link": "https://example.com/a"])
        #expect((try? TakeoutCSV.read(Array("a,b\n".utf8)).get()) == nil)
        #expect((try? TakeoutCSV.read([0xFF, 0xFE]).get()) == nil)
    }
}
