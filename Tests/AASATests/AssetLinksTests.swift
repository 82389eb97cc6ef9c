import Support
import Testing

@testable import AASA

@Suite("Android statement lists (assetlinks.json)")
struct AssetLinksTests {
    static let good = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

    static func rules(_ json: String) -> [String] {
        AssetLinksDecoder.validateFile(Array(json.utf8)).diagnostics.withoutCascades().sortedForDisplay().map(\.rule)
    }

    static func statement(relation: String = #"["delegate_permission/common.handle_all_urls"]"#, target: String) -> String {
        #"[{"relation": \#(relation), "target": \#(target)}]"#
    }

    static func app(package: String = "com.example.app", fingerprints: String = #"["\#(good)"]"#) -> String {
        #"{"namespace": "android_app", "package_name": "\#(package)", "sha256_cert_fingerprints": \#(fingerprints)}"#
    }

    @Test("site and include as Google parses them: any case of scheme (a warning); login, a bad port or any path refuse the statement")
    func webURLs() {
        func web(_ site: String) -> String { Self.statement(target: #"{"namespace": "web", "site": "\#(site)"}"#) }
        #expect(Self.rules(web("https://example.com")).isEmpty)
        #expect(Self.rules(web("https://example.com:8443")).isEmpty)
        #expect(Self.rules(web("HtTpS://example.com")) == ["assetlinks.site"])
        #expect(AssetLinksDecoder.validateFile(Array(web("HtTpS://example.com").utf8)).diagnostics.first?.severity == .warning)
        for refused in [
            "https://example.com/", "https://example.com/app", "https://user:pass@example.com", "https://x:y@example.com",
            "https://example.com:0", "https://example.com:65536", "https://example.com:http", "ftp://example.com", "example.com",
        ] {
            let found = AssetLinksDecoder.validateFile(Array(web(refused).utf8)).diagnostics
            #expect(found.contains { $0.rule == "assetlinks.site" && $0.severity == .error }, "\(refused): \(found.map(\.message))")
        }
        #expect(
            AssetLinksDecoder.validateFile(Array(web("https://x:y@example.com").utf8)).diagnostics.first?.message.contains(
                "login information"
            ) == true
        )
        func include(_ url: String) -> String { #"[{"include": "\#(url)"}]"# }
        #expect(Self.rules(include("https://example.com/.well-known/more.json")).isEmpty)
        #expect(Self.rules(include("HTTPS://example.com/more.json")) == ["assetlinks.include"])
        for refused in [
            "http://example.com/more.json", "https://user@example.com/more.json", "https://example.com:99999/more.json", "https:/x",
        ] {
            let found = AssetLinksDecoder.validateFile(Array(include(refused).utf8)).diagnostics
            #expect(found.contains { $0.rule == "assetlinks.include" && $0.severity == .error }, "\(refused)")
        }
    }

    @Test("A malformed statement is skipped and the others still verify; a broken list verifies nothing")
    func verifiable() {
        let list =
            "["
            + [
                #"{"relation": ["delegate_permission/common.handle_all_urls"], "target": \#(Self.app(package: "com.example.good"))}"#,
                #"{"relation": ["delegate_permission/common.handle_all_urls"], "target": \#(Self.app(package: "com.example.bad", fingerprints: #"["AA:BB"]"#))}"#,
                #"{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "web", "site": "https://example.com/"}}"#,
            ].joined(separator: ",") + "]"
        let result = AssetLinksDecoder.validateFile(Array(list.utf8))
        #expect(result.diagnostics.hasErrors)
        #expect(result.statements?.count == 3)
        #expect(result.verifiable.compactMap(\.package) == ["com.example.good"])
        #expect(result.verifiable.count == 1)
        #expect(AssetLinksDecoder.validateFile(Array("[]".utf8)).verifiable.isEmpty)
        #expect(AssetLinksDecoder.validateFile(Array(#"{"relation": []}"#.utf8)).verifiable.isEmpty)
    }

    @Test("Fingerprints: canonical passes; lower case and missing colons get the exact text to write; SHA-1 is named")
    func fingerprints() {
        #expect(AndroidIdentity.checkFingerprint(Self.good) == .init(canonical: Self.good, problem: nil))
        let lower = AndroidIdentity.checkFingerprint(Self.good.lowercased())
        #expect(lower.canonical == Self.good)
        #expect(lower.problem?.contains("lower-case hex") == true && lower.problem?.contains("write \"\(Self.good)\"") == true)
        let bare = AndroidIdentity.checkFingerprint(Self.good.replacingAll(":", with: ""))
        #expect(bare.canonical == Self.good && bare.problem?.contains("colons") == true)
        let sha1 = AndroidIdentity.checkFingerprint("A1:B2:C3:D4:E5:F6:07:18:29:3A:4B:5C:6D:7E:8F:90:A1:B2:C3:D4")
        #expect(sha1.canonical == nil && sha1.problem?.contains("SHA-1") == true)
        #expect(AndroidIdentity.checkFingerprint("AA:BB").problem?.contains("has 2 bytes") == true)
        #expect(AndroidIdentity.checkFingerprint("REPLACE_WITH_SHA256").problem?.contains("a placeholder") == true)
    }

    @Test("An unknown namespace is a warning while other statements verify, an error when none does")
    func unknownNamespace() {
        let unknown =
            #"{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "androidapp", "package_name": "com.b"}}"#
        let withGood =
            "[" + #"{"relation": ["delegate_permission/common.handle_all_urls"], "target": \#(Self.app())}"# + ", " + unknown + "]"
        let mixed = AssetLinksDecoder.validateFile(Array(withGood.utf8)).diagnostics
        #expect(mixed.first { $0.rule == "assetlinks.namespace" }?.severity == .warning, "\(mixed)")
        #expect(!mixed.hasErrors)
        let alone = AssetLinksDecoder.validateFile(Array(("[" + unknown + "]").utf8)).diagnostics
        #expect(alone.first { $0.rule == "assetlinks.namespace" }?.severity == .error)
    }

    @Test("A document wrapped in quotes gets the fix \"remove the quotes\", not \"use double quotes\"")
    func wrappedInQuotes() {
        let document = Self.statement(target: Self.app())
        let singleQuoted = AssetLinksDecoder.validateFile(Array(("'" + document + "'\n").utf8)).diagnostics
        #expect(singleQuoted.first?.message.contains("remove the quotes around the document") == true, "\(singleQuoted)")
        var escaped = "\""
        for character in document { escaped += character == "\"" ? "\\\"" : String(character) }
        escaped += "\""
        let oneString = AssetLinksDecoder.validateFile(Array(escaped.utf8)).diagnostics
        #expect(oneString.first?.message.contains("remove the quotes around the document") == true, "\(oneString)")
        let aasa = AASAValidator.validateFile(Array(#""{\"applinks\": {\"details\": []}}""#.utf8)).diagnostics
        #expect(aasa.first { $0.rule == "json.root-not-object" }?.message.contains("remove the quotes around the document") == true)
    }

    @Test("Sizes in messages: \"1 byte\", never \"1 bytes\"")
    func byteCounts() {
        #expect(AASAValidator.formatBytes(1) == "1 byte")
        #expect(AASAValidator.formatBytes(2) == "2 bytes")
        #expect(AASAValidator.formatBytes(20_480) == "20 KiB (20480 bytes)")
    }

    @Test("Package names follow Android's rules")
    func packageNames() {
        for valid in ["com.example.app", "io.github.app_1john419.twa", "A.b"] {
            #expect(AndroidIdentity.packageNameProblem(valid) == nil, "\(valid)")
        }
        for invalid in ["", "app", "com..app", "com.0xchat.lite", "com.example-app", ".com.a", "com.a."] {
            #expect(AndroidIdentity.packageNameProblem(invalid) != nil, "\(invalid)")
        }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var json: String
        var rules: [String]
        var testDescription: String { rules.joined(separator: ",") }
    }

    /// Every rule, fired by the smallest file that breaks it (and nothing else).
    static let cases: [Case] = [
        Case(json: statement(target: app()), rules: []),
        Case(json: #"{"relation": [], "target": {}}"#, rules: ["assetlinks.root-not-array"]),
        Case(json: "[]", rules: ["assetlinks.empty"]),
        Case(json: "[42]", rules: ["assetlinks.statement-not-object"]),
        Case(json: #"[{"target": \#(app())}]"#, rules: ["assetlinks.relation-missing"]),
        Case(
            json: statement(relation: #""delegate_permission/common.handle_all_urls""#, target: app()),
            rules: ["assetlinks.relation-type"]
        ),
        Case(json: statement(relation: "[]", target: app()), rules: ["assetlinks.relation-empty"]),
        Case(json: statement(relation: #"["handle_all_urls"]"#, target: app()), rules: ["assetlinks.relation-invalid"]),
        Case(
            json: statement(relation: #"["delegate_permission/common.handle_all_URLS"]"#, target: app()),
            rules: ["assetlinks.relation-invalid"]
        ),
        Case(
            json: statement(relation: #"["delegate_permission/common.get_user_location"]"#, target: app()),
            rules: ["assetlinks.relation-unknown"]
        ),
        Case(json: #"[{"relation": ["delegate_permission/common.handle_all_urls"]}]"#, rules: ["assetlinks.target-missing"]),
        Case(json: statement(target: #""https://example.com""#), rules: ["assetlinks.target-type"]),
        Case(json: statement(target: #"{"namespace": "android"}"#), rules: ["assetlinks.namespace"]),
        Case(json: statement(target: #"{"namespace": "ios_app", "appid": "585027354"}"#), rules: ["assetlinks.namespace"]),
        Case(
            json: statement(target: #"{"namespace": "android_app", "sha256_cert_fingerprints": ["\#(good)"]}"#),
            rules: ["assetlinks.package-missing"]
        ),
        Case(json: statement(target: app(package: "com.0xchat.lite")), rules: ["assetlinks.package-name"]),
        Case(
            json: statement(target: #"{"namespace": "android_app", "package_name": "com.a.b"}"#),
            rules: ["assetlinks.fingerprints-missing"]
        ),
        Case(json: statement(target: app(fingerprints: "[]")), rules: ["assetlinks.fingerprints-missing"]),
        Case(json: statement(target: app(fingerprints: #""\#(good)""#)), rules: ["assetlinks.fingerprints-missing"]),
        Case(json: statement(target: app(fingerprints: #"["\#(good.lowercased())"]"#)), rules: ["assetlinks.fingerprint"]),
        Case(json: statement(target: #"{"namespace": "web", "site": "https://example.com/path"}"#), rules: ["assetlinks.site"]),
        Case(json: statement(target: #"{"namespace": "web", "site": "example.com"}"#), rules: ["assetlinks.site"]),
        Case(json: statement(target: #"{"namespace": "web", "site": "https://example.com"}"#), rules: []),
        Case(json: #"[{"include": "https://example.com/more.json"}]"#, rules: []),
        Case(json: #"[{"include": "http://example.com/more.json"}]"#, rules: ["assetlinks.include"]),
        Case(json: #"[{"include": "https://example.com/more.json", "target": \#(app())}]"#, rules: ["assetlinks.include"]),
        Case(
            json:
                #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.a.b", "sha256_cert_fingerprint": ["\#(good)"]}}]"#,
            rules: ["assetlinks.unknown-key"]
        ),
        Case(
            json: #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": \#(app()), "notes": "x"}]"#,
            rules: ["assetlinks.unknown-key"]
        ),
        Case(
            json:
                #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": \#(app())}, {"relation": ["delegate_permission/common.handle_all_urls"], "target": \#(app())}]"#,
            rules: ["assetlinks.duplicate"]
        ),
        Case(
            json: #"[{"relation": ["delegate_permission/common.handle_all_urls",], "target": \#(app())}]"#,
            rules: ["json.trailing-comma"]
        ),
    ]

    @Test("Every rule fires on its example, alone", arguments: cases)
    func rule(_ testCase: Case) {
        #expect(Self.rules(testCase.json) == testCase.rules, "\(testCase.json)")
    }

    @Test("A file larger than 128 KiB is a warning, not an error")
    func size() {
        let statements = (0..<600).map { index in
            #"{"relation": ["delegate_permission/common.handle_all_urls"], "target": \#(Self.app(package: "com.example.app" + String(index)))}"#
        }
        let findings = AssetLinksDecoder.validateFile(Array("[\(statements.joined(separator: ","))]".utf8)).diagnostics
        #expect(findings.map(\.rule) == ["assetlinks.size"])
        #expect(findings.first?.severity == .warning)
    }

    @Test("Generation is canonical: one statement per package and relation, fingerprints normalised, same config same bytes")
    func generation() throws {
        let config = #"""
            {"version": 1,
             "apps": {"shop": {"apple": "ABCDE12345.com.example.shop",
                               "android": {"package": "com.example.shop", "sha256": "\#(Self.good.lowercased().replacingAll(":", with: ""))"}}},
             "sites": [{"hosts": ["example.com"], "webcredentials": {"apps": ["shop"]},
                        "android": [{"app": "shop", "relations": ["handle_all_urls", "get_login_creds"]},
                                    {"package": "com.example.other", "sha256": ["\#(Self.good)"]}]}]}
            """#
        func load() -> LoadedConfig {
            ConfigLoader.load(
                configBytes: Array(config.utf8),
                configPath: "config.json",
                readFile: { _ in .failure(FileReadError("none")) }
            )
        }
        let loaded = load()
        #expect(loaded.diagnostics.isEmpty, "\(loaded.diagnostics)")
        let bytes = try #require(loaded.site(forHost: "example.com")?.assetLinks?.bytes)
        let app = #"{"namespace":"android_app","package_name":"com.example.shop","sha256_cert_fingerprints":["\#(Self.good)"]}"#
        let other = #"{"namespace":"android_app","package_name":"com.example.other","sha256_cert_fingerprints":["\#(Self.good)"]}"#
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"[{"relation":["delegate_permission/common.handle_all_urls"],"target":\#(app)},"#
                + #"{"relation":["delegate_permission/common.get_login_creds"],"target":\#(app)},"#
                + #"{"relation":["delegate_permission/common.handle_all_urls"],"target":\#(other)}]"#
        )
        #expect(load().site(forHost: "example.com")?.assetLinks?.bytes == bytes)
        // What is generated passes the same checks as a hosted file.
        #expect(AssetLinksDecoder.validateFile(bytes).diagnostics.isEmpty)
    }

    @Test("Config mistakes: an app without an android part, an Android-only app used for Apple, bad packages and fingerprints")
    func configMistakes() {
        func rules(
            _ sites: String,
            apps: String =
                #""shop": "ABCDE12345.com.example.shop", "droid": {"android": {"package": "com.example.droid", "sha256": ["\#(Self.good)"]}}"#
        ) -> [String] {
            ConfigLoader.load(
                configBytes: Array(#"{"version": 1, "apps": {\#(apps)}, "sites": [\#(sites)]}"#.utf8),
                configPath: "config.json",
                readFile: { _ in .failure(FileReadError("none")) }
            ).diagnostics.sortedForDisplay().map(\.rule)
        }
        #expect(rules(#"{"hosts": ["a.com"], "android": ["droid"]}"#) == [])
        #expect(rules(#"{"hosts": ["a.com"], "android": ["shop"]}"#) == ["app.unknown"])
        #expect(rules(#"{"hosts": ["a.com"], "webcredentials": {"apps": ["droid"]}}"#) == ["app.unknown"])
        #expect(
            rules(#"{"hosts": ["a.com"], "android": [{"package": "app", "sha256": ["\#(Self.good)"]}]}"#) == ["assetlinks.package-name"]
        )
        #expect(rules(#"{"hosts": ["a.com"], "android": [{"package": "com.a.b", "sha256": ["AB:CD"]}]}"#) == ["assetlinks.fingerprint"])
        #expect(rules(#"{"hosts": ["a.com"], "android": [{"package": "com.a.b"}]}"#) == ["assetlinks.fingerprints-missing"])
        #expect(
            rules(#"{"hosts": ["a.com"], "android": [{"app": "droid", "relations": ["delegate_permission/common.x"]}]}"#) == [
                "assetlinks.relation-unknown"
            ]
        )
        #expect(rules(#"{"hosts": ["a.com"], "android": ["droid", "droid"]}"#) == ["android.duplicate"])
        #expect(rules(#"{"hosts": ["a.com"], "android": ["droid"], "assetlinksFile": "a.json"}"#).contains("site.source"))
        #expect(rules(#"{"hosts": ["a.com"], "android": []}"#) == ["android.empty"])
    }

    @Test("App Links verification: handle_all_urls to an android_app, one grant per package with every fingerprint")
    func verification() throws {
        let json = #"""
            [{"relation": ["delegate_permission/common.get_login_creds"], "target": \#(Self.app(package: "com.creds.only"))},
             {"relation": ["delegate_permission/common.handle_all_urls"], "target": \#(Self.app())},
             {"relation": ["delegate_permission/common.handle_all_urls"], "target": \#(Self.app(fingerprints: #"["\#(Self.good.replacingAll("14:6D", with: "15:6D"))"]"#))},
             {"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "web", "site": "https://example.com"}}]
            """#
        let statements = try #require(AssetLinksDecoder.validateFile(Array(json.utf8)).statements)
        let grants = AppLinkVerification.grants(statements)
        #expect(grants.map(\.package) == ["com.example.app"])
        #expect(grants.first?.fingerprints.count == 2)
        #expect(grants.first?.statement == 1)
    }
}

@Suite("Real assetlinks.json files")
struct AssetLinksCorpusTests {
    static let directory = Fixtures.repositoryRoot + "/Tests/AASATests/Fixtures/real-assetlinks"

    /// (file, class, error rules) from index.md.
    static func index() throws -> [(String, String, [String])] {
        let text = String(decoding: try Fixtures.read(directory + "/index.md"), as: UTF8.self)
        return text.split(separator: "\n").compactMap { line -> (String, String, [String])? in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { String($0).trimmingSpacesAndTabs() }
            guard cells.count >= 6, cells[1].hasPrefix("`") else { return nil }
            let rules =
                cells[4] == "—" ? [] : cells[4].split(separator: ",").map { String($0).trimmingSpacesAndTabs().replacingAll("`", with: "") }
            return (cells[1].replacingAll("`", with: ""), cells[3], rules)
        }
    }

    @Test("Each file is classified as index.md says: valid ones give no error, broken ones exactly their errors")
    func classification() throws {
        let entries = try Self.index()
        #expect(entries.count >= 20)
        for (name, kind, rules) in entries {
            let findings = AssetLinksDecoder.validateFile(try Fixtures.read(Self.directory + "/" + name)).diagnostics.withoutCascades()
            let errors = findings.filter { $0.severity == .error }.map(\.rule)
            if kind == "valid" {
                #expect(errors.isEmpty, "\(name): \(findings)")
            } else {
                #expect(Set(errors) == Set(rules), "\(name): \(findings)")
                #expect(errors.count == rules.count, "\(name): one cause, one finding: \(findings)")
            }
        }
    }
}
