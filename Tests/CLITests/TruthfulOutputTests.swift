import AASA
import Foundation
import TestSupport
import Testing

@testable import CLI

/// What `match`, `generate` and `validate` say must be so: each case here was found saying something
/// untrue (issue 21's list), and fails on the code that said it.
@Suite("Everything the CLI prints is true")
final class TruthfulOutputTests {
    let first = FirstDayTests()
    /// The directories this test wrote, removed when it ends (a new instance runs each test).
    private var written: [String] = []

    deinit {
        for directory in written { try? FileManager.default.removeItem(atPath: directory) }
    }

    func write(_ files: [String: String]) throws -> String {
        let directory = try first.temporaryDirectory()
        written.append(directory)
        for (name, text) in files { try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8) }
        return directory
    }

    /// One details entry with two apps, and a later entry opening a third app for the same paths.
    static let twoApps = #"""
        {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop", "shopBeta": "ABCDE12345.com.example.shop.beta", "other": "ZYXWV54321.com.example.other"},
         "sites": [{"hosts": ["example.com"],
                    "applinks": {"details": [{"apps": ["shop", "shopBeta"], "components": [{"/": "/product/*"}]},
                                             {"apps": ["other"], "components": [{"/": "/product/*"}]}]}}]}
        """#

    @Test("match --expect: any app of the deciding entry counts, app names are accepted, every opening app is listed")
    func expectAmongSeveralApps() throws {
        let directory = try write(["c.json": Self.twoApps])
        let config = directory + "/c.json"
        let url = "https://example.com/product/1"
        let beta = try first.tool(["match", "--config", config, "--expect", "ABCDE12345.com.example.shop.beta", url])
        #expect(beta.status == 0, "\(beta.stdout)")
        #expect(!beta.stdout.contains("MISMATCH"))
        #expect(
            beta.stdout.contains(
                "opens ABCDE12345.com.example.shop (or, where it is not installed, ABCDE12345.com.example.shop.beta, then ZYXWV54321.com.example.other)"
            ),
            "\(beta.stdout)"
        )
        #expect(try first.tool(["match", "--config", config, "--expect", "shopBeta", url]).status == 0)
        #expect(try first.tool(["match", "--config", config, "--expect", "other", url]).status == 0)
        let wrong = try first.tool(["match", "--config", config, "--expect", "ABCDE12345.com.example.missing", url])
        #expect(wrong.status == 1)
        #expect(wrong.stdout.contains("got ABCDE12345.com.example.shop, ABCDE12345.com.example.shop.beta, ZYXWV54321.com.example.other"))
        let unknownName = try first.tool(["match", "--config", config, "--expect", "shopp", url])
        #expect(unknownName.status == 2)
        #expect(unknownName.stderr.contains("nor an app name of the config (other, shop, shopBeta)"), "\(unknownName.stderr)")
        let json = try first.tool(["match", "--config", config, "--json", url])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(
            object["apps"] as? [String] == [
                "ABCDE12345.com.example.shop", "ABCDE12345.com.example.shop.beta", "ZYXWV54321.com.example.other",
            ]
        )
    }

    @Test("match --ios 11 says it reads as iOS 9 to 12 do; --ios 8 is refused")
    func olderIOS() throws {
        let eleven = try first.tool(["match", "--config", "config/example.json", "--ios", "11", "https://example.com/cart"])
        #expect(eleven.stdout.contains("as iOS 11 reads it, like every iOS from 9 to 12"), "\(eleven.stdout)")
        let eight = try first.tool(["match", "--config", "config/example.json", "--ios", "8", "https://example.com/cart"])
        #expect(eight.status == 2)
        #expect(eight.stderr.contains("from 9 (the first with universal links)"))
    }

    @Test("generate --host prints that host's findings and the config-wide ones only, also for a host no site serves")
    func generateShowsOneSite() throws {
        let config = #"""
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
             "sites": [{"hosts": ["a.example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/x/*", "?": {"q": "*"}, "exclude": true}, {"/": "/y"}]}]}},
                       {"hosts": ["b.example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/z/*"}]}]}}]}
            """#
        let directory = try write(["c.json": config])
        let own = try first.tool(["generate", "--config", directory + "/c.json", "--host", "a.example.com"])
        #expect(own.stderr.contains("query.matches-absent"))
        for host in ["b.example.com", "nobody.example.com"] {
            let other = try first.tool(["generate", "--config", directory + "/c.json", "--host", host, "--allow-unknown"])
            #expect(other.status == 0)
            #expect(!other.stderr.contains("query.matches-absent"), "\(host): \(other.stderr)")
        }
    }

    @Test("match names, for each blocked app, the exclusion of its own entry (two apps, two rules)")
    func blockedPerApp() throws {
        let config = #"""
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop", "beta": "ABCDE12345.com.example.beta"},
             "sites": [{"hosts": ["acme.example"], "applinks": {"details": [
               {"apps": ["shop"], "components": [{"/": "/p/*", "?": {"web": "1"}, "exclude": true}, {"/": "/p/*"}]},
               {"apps": ["beta"], "components": [{"/": "/p/1*", "exclude": true}, {"/": "/p/*"}]}]}}]}
            """#
        let directory = try write(["two.json": config])
        let result = try first.tool(["match", "--config", directory + "/two.json", "https://acme.example/p/123?web=1"])
        #expect(result.status == 1)
        #expect(
            result.stdout.contains(
                #"ABCDE12345.com.example.shop blocked by details[0] component 0: {"/":"/p/*","?":{"web":"1"},"exclude":true}"#
            )
        )
        #expect(
            result.stdout.contains(#"ABCDE12345.com.example.beta blocked by details[1] component 0: {"/":"/p/1*","exclude":true}"#),
            "\(result.stdout)"
        )
        let json = try first.tool(["match", "--config", directory + "/two.json", "--json", "https://acme.example/p/123?web=1"])
        #expect(json.stdout.contains(#""blockedBy":[{"details":0,"rule":0"#) && json.stdout.contains(#"{"details":1,"rule":0"#))
        // Shop excluded by the first entry, beta opened by the second: the line names shop's own rule.
        let opens = try first.tool(["match", "--config", directory + "/two.json", "https://acme.example/p/9?web=1"])
        #expect(opens.stdout.contains("opens ABCDE12345.com.example.beta"), "\(opens.stdout)")
        #expect(opens.stdout.contains(#"ABCDE12345.com.example.shop excluded earlier by details[0] component 0"#), "\(opens.stdout)")
    }

    @Test("match --ios 12 on a modern-only document says it has no legacy entries and how to add them")
    func legacyAbsent() throws {
        let config = #"""
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
             "sites": [{"hosts": ["acme.example"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/p/*"}]}]}}]}
            """#
        let directory = try write([
            "modern.json": config,
            "modern-aasa": #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": [{"/": "/p/*"}]}]}}"#,
        ])
        let legacy = try first.tool(["match", "--config", directory + "/modern.json", "--ios", "12", "https://acme.example/p/1"])
        #expect(legacy.status == 1)
        #expect(legacy.stdout.contains("no legacy entries (appID + paths)"), "\(legacy.stdout)")
        #expect(legacy.stdout.contains(#"add "formats": ["modern", "legacy"] to the site's applinks"#))
        let file = try first.tool(["match", "--file", directory + "/modern-aasa", "--legacy", "https://acme.example/p/1"])
        #expect(file.stdout.contains(#"add a details entry with "appID" and "paths""#), "\(file.stdout)")
        // A document with legacy entries gets no such line.
        let both = try first.tool(["match", "--config", "config/example.json", "--ios", "12", "https://example.com/product/1"])
        #expect(both.status == 0 && !both.stdout.contains("no legacy entries"))
    }

    @Test("Two app names with one app ID: app.duplicate-id warns, and the ID is listed once in every service")
    func duplicateAppID() throws {
        let config = #"""
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop", "beta": "ABCDE12345.com.example.shop", "clip": "ABCDE12345.com.example.shop.Clip"},
             "sites": [{"hosts": ["acme.example"], "applinks": {"details": [{"apps": ["shop", "beta"], "components": [{"/": "/p/*"}]}]},
                        "webcredentials": {"apps": ["shop", "beta", "clip"]}}]}
            """#
        let directory = try write(["dup.json": config])
        let validated = try first.tool(["validate", "--config", directory + "/dup.json"])
        #expect(validated.status == 0)
        #expect(
            validated.stderr.contains(#"apps "shop" and "beta" are the same app ID ABCDE12345.com.example.shop"#),
            "\(validated.stderr)"
        )
        #expect(validated.stderr.contains("[app.duplicate-id]") && validated.stderr.contains("$.apps.beta"))
        #expect(try first.tool(["validate", "--config", directory + "/dup.json", "--strict"]).status == 1)
        let generated = try first.tool(["generate", "--config", directory + "/dup.json", "--host", "acme.example"])
        #expect(generated.stdout.contains(#""appIDs":["ABCDE12345.com.example.shop"]"#), "\(generated.stdout)")
        #expect(generated.stdout.contains(#""webcredentials":{"apps":["ABCDE12345.com.example.shop","ABCDE12345.com.example.shop.Clip"]}"#))
    }

    @Test(
        "generate --host with a host no site serves (a typo) exits 1 and names the closest host; --allow-unknown prints the empty document"
    )
    func generateUnknownHost() throws {
        let typo = try first.tool(["generate", "--config", "config/example.json", "--host", "www.exmaple.com"])
        #expect(typo.status == 1 && typo.stdout.isEmpty, "a deploy script must not publish an empty document: \(typo)")
        #expect(typo.stderr.contains(#"no site serves "www.exmaple.com" — did you mean "www.example.com"?"#), "\(typo.stderr)")
        #expect(typo.stderr.contains("--allow-unknown"))
        let help = try first.tool(["generate", "--help"])
        #expect(help.stdout.contains("[--allow-unknown]") && help.stdout.contains("--all --out DIR [--list]"), "the usage line names them")
        let allowed = try first.tool(["generate", "--config", "config/example.json", "--host", "www.exmaple.com", "--allow-unknown"])
        #expect(allowed.status == 0 && allowed.stdout.hasPrefix(#"{"applinks":{"#) && allowed.stderr.contains("warning: no site serves"))
    }

    @Test("validate reports everything in one run: a server error does not hide missing certificate files or site errors")
    func validateDoesNotStopEarly() throws {
        let config = #"""
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
             "sites": [{"hosts": ["a.example.com"], "applinks": {"details": [{"apps": ["shopp"], "components": [{"/": "/y"}]}]}}],
             "server": {"listen": [{"address": "127.0.0.1", "port": 99999, "tls": true}],
                        "certificates": [{"hosts": ["a.example.com"], "certificate": "missing.pem", "key": "missing-key.pem"}]}}
            """#
        let directory = try write(["c.json": config])
        let result = try first.tool(["validate", "--config", directory + "/c.json"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("[app.unknown]"))
        #expect(result.stderr.contains("[server.listen]"))
        #expect(result.stderr.contains("missing.pem: no such file"), "\(result.stderr)")
        #expect(result.stderr.contains("missing-key.pem: no such file"))
    }

    @Test("\"site\" for \"sites\" is one finding; an entitlement pasted as a URL is one finding with the exact fix")
    func oneFindingPerMistake() throws {
        let directory = try write([
            "c.json": #"{"version": 1, "site": [{"hosts": ["a.example.com"], "file": "x.aasa"}]}"#,
            "e.entitlements": """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>com.apple.developer.associated-domains</key>
            <array><string>applinks:https://shop.example.com/</string></array>
            </dict></plist>
            """,
        ])
        let config = try first.tool(["validate", "--config", directory + "/c.json", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(config.stdout.utf8)) as? [String: Any])
        let rules = (report["findings"] as? [[String: Any]] ?? []).compactMap { $0["rule"] as? String }
        #expect(rules == ["key.unknown"], "\(rules)")
        let entitlement = try first.tool(["validate", "--entitlements", directory + "/e.entitlements", "--json"])
        let findings =
            (try JSONSerialization.jsonObject(with: Data(entitlement.stdout.utf8)) as? [String: Any])?["findings"] as? [[String: Any]]
        #expect(findings?.count == 1, "\(entitlement.stdout)")
        #expect((findings?.first?["message"] as? String)?.contains("write \"applinks:shop.example.com\"") == true)
    }

    @Test("validate --file over the read limit is size.limit with the size; a big file's finding names its biggest parts")
    func sizeOfAFile() throws {
        let directory = try write([:])
        let components = (0..<6000).map { #"{"/": "/p\#($0)/*", "comment": "\#(String(repeating: "x", count: 200))"}"# }
        let big =
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": ["# + components.joined(separator: ",")
            + "]}]}}"
        try big.write(toFile: directory + "/big", atomically: true, encoding: .utf8)
        let result = try first.tool(["validate", "--file", directory + "/big"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("[size.limit]"))
        #expect(result.stderr.contains("biggest parts: details entry for ABCDE12345.com.example.shop"), "\(result.stderr)")
        let huge = directory + "/huge"
        try Data(repeating: 0x20, count: 20 << 20).write(to: URL(fileURLWithPath: huge))
        let hugeResult = try first.tool(["validate", "--file", huge])
        #expect(hugeResult.status == 1)
        #expect(hugeResult.stderr.contains("(20971520 bytes) uncompressed, over Apple's 128 KB limit"), "\(hugeResult.stderr)")
        #expect(!hugeResult.stderr.contains("cannot read"))
    }

    @Test("validate --strict: when warnings fail the run, the summary and the JSON say so")
    func validateStrict() throws {
        let document =
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.a.b"], "components": [{"/": "/p/*", "?": {"q": "*"}, "exclude": true}, {"/": "/p/*"}]}]}}"#
        let strict = try first.tool(["validate", "--file", "-", "--strict"], input: document)
        #expect(strict.status == 1)
        #expect(strict.stderr.contains("<stdin>: failed (--strict: warnings fail)"), "\(strict.stderr)")
        let json = try first.tool(["validate", "--file", "-", "--strict", "--json"], input: document)
        #expect((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["ok"] as? Bool == false)
        let lenient = try first.tool(["validate", "--file", "-", "--json"], input: document)
        #expect(lenient.status == 0)
        #expect((try JSONSerialization.jsonObject(with: Data(lenient.stdout.utf8)) as? [String: Any])?["ok"] as? Bool == true)
    }

    @Test("A gzip-compressed file is named as such, not as a control character")
    func gzipFile() throws {
        let gzipped: [UInt8] = [
            0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xAB, 0xAE, 0x05, 0x00, 0x43, 0xBF, 0xA6, 0xA3, 0x02, 0x00, 0x00,
            0x00,
        ]
        let directory = try write([:])
        try Data(gzipped).write(to: URL(fileURLWithPath: directory + "/aasa"))
        let result = try first.tool(["validate", "--file", directory + "/aasa"])
        #expect(result.stderr.contains("the file is gzip-compressed"), "\(result.stderr)")
        #expect(!result.stderr.contains("U+001F"))
    }

    @Test("Small ones: healthcheck resolves a name; --versio is suggested --version; relation \"login\"; an empty config")
    func smallOnes() throws {
        let resolved = try first.tool(["healthcheck", "--admin", "localhost:1", "--timeout", "2"])
        #expect(resolved.status == 1, "a name is resolved and asked, not refused as usage")
        #expect(resolved.stderr.contains("127.0.0.1:1") || resolved.stderr.contains("[::1]:1"), "\(resolved.stderr)")
        let typo = run(["--versio"])
        #expect(typo.status == 2)
        #expect(typo.console.stderr.contains("unknown option '--versio'; did you mean '--version'?"), "\(typo.console.stderr)")
        let relation = AssetLinksDecoder.validateFile(
            Array(#"[{"relation": ["login"], "target": {"namespace": "web", "site": "https://example.com"}}]"#.utf8)
        ).diagnostics
        #expect(relation.first?.message.contains("did you mean \"delegate_permission/common.get_login_creds\"?") == true, "\(relation)")
        let directory = try write(["empty.json": ""])
        let empty = try first.tool(["validate", "--config", directory + "/empty.json"])
        #expect(empty.stderr.contains("the config file is empty; a config is a JSON object such as {\"version\": 1, \"sites\""))
        #expect(!empty.stderr.contains("\"applinks\": {\"details\": []}}"), "an AASA document's shape, for a config")
    }

    @Test("generate ends with a newline on a terminal (either document), and prints the exact bytes otherwise")
    func generateNewline() {
        let android = repositoryRoot + "/config/examples/android.json"
        for extra in [["--android"], []] {
            let piped = run(["generate", "--config", android, "--host", "example.com"] + extra)
            #expect(piped.status == 0)
            #expect(piped.console.stdout.last == UInt8(ascii: "]") || piped.console.stdout.last == UInt8(ascii: "}"))
            let console = CapturingConsole()
            console.stdoutIsInteractive = true
            #expect(CommandLineTool.run(["generate", "--config", android, "--host", "example.com"] + extra, console: console) == 0)
            #expect(console.stdout == piped.console.stdout + [0x0A], "\(extra)")
        }
    }
}
