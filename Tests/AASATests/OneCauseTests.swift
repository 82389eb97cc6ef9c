import AASA
import Testing

/// One cause, one finding: what only restates an error already reported is not reported again.
@Suite("One cause, one finding")
struct OneCauseTests {
    static func rules(_ json: String) -> [String] {
        AASAValidator.validateFile(Array(json.utf8)).diagnostics.sortedForDisplay().map(\.rule)
    }

    static func configRules(_ json: String) -> [String] {
        ConfigLoader.load(configBytes: Array(json.utf8), configPath: "config.json", readFile: { _ in .failure(FileReadError("none")) })
            .diagnostics.sortedForDisplay().map(\.rule)
    }

    @Test("A misspelt key is reported once, with its suggestion, and not again as the absence it causes")
    func misspeltKeys() {
        #expect(Self.rules(#"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.a.b"],"componets":[{"/":"/x"}]}]}}"#) == ["key.unknown"])
        #expect(Self.rules(#"{"applinks":{"details":[{"appIds":["ABCDE12345.com.a.b"],"components":[{"/":"/x"}]}]}}"#) == ["key.miscased"])
        #expect(Self.rules(#"{"applinks":{"detials":[{"appIDs":["ABCDE12345.com.a.b"],"components":[{"/":"/x"}]}]}}"#) == ["key.unknown"])
        #expect(
            Self.rules(#"{"applink":{"details":[]}, "webcredentials": {"aps": ["ABCDE12345.com.a.b"]}}"#) == ["key.unknown", "key.unknown"]
        )
        // "aplinks" beside an App Clip: the typo, not also "appclips without applinks".
        #expect(
            Self.rules(#"{"aplinks":{"details":[]}, "appclips": {"apps": ["ABCDE12345.com.a.b.Clip"]}}"#) == ["key.unknown"]
        )
        #expect(Self.rules(#"{"appclips": {"apps": ["ABCDE12345.com.a.b.Clip"]}}"#) == ["applinks.missing"], "still said without the typo")
        // "appId" beside components is meant as appIDs, an array.
        let appId = AASAValidator.validateFile(
            Array(#"{"applinks":{"details":[{"appId":"ABCDE12345.com.a.b","components":[{"/":"/x"}]}]}}"#.utf8)
        )
        #expect(appId.diagnostics.map(\.rule) == ["key.miscased"])
        #expect(appId.diagnostics.first?.message.contains(#"Rename it to "appIDs", a list beside components"#) == true)
        let legacy = AASAValidator.validateFile(Array(#"{"applinks":{"details":[{"appId":"ABCDE12345.com.a.b","paths":["/x"]}]}}"#.utf8))
        #expect(legacy.diagnostics.first?.message.contains(#"Rename it to "appID""#) == true, "with paths, appID stays")
        // Without a misspelling the same absences are still reported.
        #expect(Self.rules(#"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.a.b"]}]}}"#) == ["details.no-rules"])
    }

    @Test("A file naming no app is one error, not also \"details is empty\"")
    func noAppIsOneFinding() {
        #expect(Self.rules(#"{"applinks":{"details":[]}}"#) == ["document.no-app"])
        #expect(Self.rules("{}") == ["document.no-app"])
        // With an app for passwords, the empty details is the only (and a lesser) finding.
        #expect(Self.rules(#"{"applinks":{"details":[]},"webcredentials":{"apps":["ABCDE12345.com.a.b"]}}"#) == ["details.empty"])
    }

    @Test("An app name that does not resolve is one error, not also \"this entry names no app\"")
    func unknownAppName() {
        let config = #"""
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
             "sites": [{"hosts": ["example.com"], "applinks": {"details": [{"apps": ["shopp"], "components": [{"/": "/*"}]}]},
                        "webcredentials": {"apps": ["shop"]}}]}
            """#
        #expect(Self.configRules(config) == ["app.unknown"])
    }

    @Test("A placeholder app ID defined once and used three times is one error, at its definition")
    func placeholderOnce() {
        let config = #"""
            {"version": 1, "apps": {"app": "REPLACEME0.com.example.your-app"},
             "sites": [{"hosts": ["example.com"], "applinks": {"details": [{"apps": ["app"], "components": [{"/": "/*"}]}]},
                        "webcredentials": {"apps": ["app"]}, "appclips": {"apps": ["app"]}}]}
            """#
        let findings = ConfigLoader.load(
            configBytes: Array(config.utf8),
            configPath: "config.json",
            readFile: { _ in .failure(FileReadError("none")) }
        )
        .diagnostics
        let placeholder = findings.filter { $0.rule == "appid.placeholder" }
        #expect(placeholder.count == 1)
        #expect(placeholder.first?.severity == .error)
        #expect(placeholder.first?.path == "$.apps.app")
    }

    @Test("The same rule is never reported twice at one place")
    func noRepeatsAtOnePlace() {
        let place = SourceLocation(offset: 5, line: 1, column: 6)
        let findings = [
            Diagnostic(.warning, "x.rule", "first", at: place, path: "$.a"),
            Diagnostic(.warning, "x.rule", "second wording", at: place, path: "$.a"),
            Diagnostic(.warning, "y.rule", "other rule", at: place, path: "$.a"),
        ]
        #expect(findings.withoutCascades().map(\.message) == ["first", "other rule"])
    }

    @Test("An aasa-server config handed over as an AASA file is recognised, with the command to use")
    func configAsFile() {
        let findings = AASAValidator.validateFile(Array(#"{"version": 1, "sites": [{"hosts": ["example.com"]}]}"#.utf8)).diagnostics
        #expect(findings.map(\.rule) == ["file.is-config"])
        #expect(findings.first?.message.contains("aasa-server validate --config") == true)
        // A real AASA file that happens to carry a "sites" key is not mistaken for one.
        #expect(
            !Self.rules(#"{"applinks": {"details": []}, "sites": 1, "webcredentials": {"apps": ["ABCDE12345.com.a.b"]}}"#).contains(
                "file.is-config"
            )
        )
    }
}
