import Testing

@testable import AASA

@Suite("Associated Domains entitlement")
struct EntitlementsTests {
    static let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>com.apple.developer.associated-domains</key>
        \t<array>
        \t\t<string>applinks:example.com</string>
        \t\t<string>applinks:www.example.com?mode=developer</string>
        \t\t<string>webcredentials:example.com</string>
        \t\t<string>applinks:*.tenant.example.com</string>
        \t</array>
        </dict>
        </plist>
        """

    @Test("Entries are read from Xcode's plist with their line and column")
    func plistEntries() throws {
        let (entries, findings) = EntitlementsValidator.entries(in: Self.plist)
        #expect(findings.isEmpty)
        #expect(
            entries.map(\.0) == [
                "applinks:example.com", "applinks:www.example.com?mode=developer", "webcredentials:example.com",
                "applinks:*.tenant.example.com",
            ]
        )
        #expect(entries[0].1.line == 7)
        #expect(entries[0].1.column == 11)
        // Valid, with one warning: the developer-mode entry must not reach a release build.
        #expect(EntitlementsValidator.validate(Self.plist).map(\.rule) == ["entitlement.mode-not-for-release"])
    }

    @Test("A plist without the entitlement says which key is missing")
    func missingKey() {
        let findings = EntitlementsValidator.validate("<plist><dict></dict></plist>")
        #expect(findings.first?.rule == "entitlement.missing")
    }

    @Test(
        "Each malformed entry gets its rule",
        arguments: [
            ("applinks:https://example.com", "entitlement.scheme"),
            ("applinks:example.com:8443", "entitlement.port"),
            ("applinks:example.com/path", "entitlement.path"),
            ("applinks:example.com/", "entitlement.trailing-slash"),
            ("applinks:a.*.example.com", "entitlement.wildcard"),
            ("applinks:*example.com", "entitlement.wildcard"),
            ("appclips:*.example.com", "entitlement.appclips-wildcard"),
            ("applinks:example.com?mode=dev", "entitlement.mode"),
            ("applink:example.com", "entitlement.service"),
            ("example.com", "entitlement.format"),
            ("applinks:exa mple.com", "entitlement.host"),
        ]
    )
    func malformed(entry: String, rule: String) {
        let findings = EntitlementsValidator.validate(entry + "\n")
        #expect(findings.map(\.rule).contains(rule), "\(entry): \(findings.map(\.rule))")
        #expect(findings.allSatisfy { $0.location?.line == 1 })
    }

    @Test("Valid forms pass: modes, wildcard, every service; comments and blank lines are skipped in line lists")
    func validForms() {
        let text = """
            # staging
            applinks:example.com?mode=developer+managed

            activitycontinuation:example.com
            appclips:clip.example.com
            applinks:*.example.com
            """
        let findings = EntitlementsValidator.validate(text)
        #expect(findings.map(\.rule) == ["entitlement.mode-not-for-release"])
        #expect(findings.first?.severity == .warning)
        #expect(findings.first?.message.contains("Apple's CDN") == true)
        #expect(findings.first?.message.contains("MDM") == true)
        #expect(!findings.hasErrors)
    }

    @Test("Cross-check with a config: the host must be served and its document must list the app")
    func crossCheck() throws {
        let config = ConfigLoader.load(
            configBytes: Array(
                #"""
                {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": [
                  {"hosts": ["example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{}]}]}},
                  {"hosts": ["www.example.com"], "webcredentials": {"apps": ["ABCDE12345.com.example.Shop"]}}]}
                """#.utf8
            ),
            configPath: "config.json",
            readFile: { _ in .failure(FileReadError("none")) }
        )
        let text = """
            applinks:example.com
            applinks:*.example.com
            applinks:other.example.org
            webcredentials:www.example.com
            applinks:www.example.com
            """
        let findings = EntitlementsValidator.validate(text, config: config, app: "ABCDE12345.com.example.shop")
        let byLine = Dictionary(grouping: findings) { $0.location?.line ?? 0 }.mapValues { $0.map(\.rule) }
        #expect(byLine[1] == nil)
        #expect(byLine[2] == nil, "*.example.com is served by the apex file")
        #expect(byLine[3] == ["entitlement.host-not-served"])
        #expect(byLine[4] == ["entitlement.app-missing"])
        #expect(findings.first { $0.location?.line == 4 }?.message.contains("differs only in case") == true)
        #expect(byLine[5] == ["entitlement.app-missing"])
    }
}
