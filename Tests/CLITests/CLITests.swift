import AASA
import Foundation
import TestSupport
import Testing

@testable import CLI

/// Captures what a subcommand prints, so the CLI runs in-process.
final class CapturingConsole: Console, @unchecked Sendable {
    var stdout: [UInt8] = []
    var stderr = ""
    var stderrIsTerminal = false
    var stdoutIsInteractive = false

    func out(_ text: String) { stdout += Array(text.utf8) }
    func outBytes(_ bytes: [UInt8]) { stdout += bytes }
    func err(_ text: String) { stderr += text }
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

let repositoryRoot = TestPaths.repositoryRoot
let exampleConfig = repositoryRoot + "/config/example.json"

func run(_ arguments: [String]) -> (status: Int32, console: CapturingConsole) {
    let console = CapturingConsole()
    let status = CommandLineTool.run(arguments, console: console)
    return (status, console)
}

@Suite("Command line")
struct CLITests {
    @Test("--version and --help succeed; help <subcommand> prints that subcommand's usage")
    func helpAndVersion() {
        let version = run(["--version"])
        #expect(version.status == 0)
        // The version, the commit it was built from and the OpenSSL it runs with.
        #expect(version.console.stdoutText.hasPrefix("aasa-server \(CommandLineTool.version) (commit "))
        #expect(version.console.stdoutText.contains("; OpenSSL 3."))
        let help = run(["--help"])
        #expect(help.status == 0)
        for name in ["validate", "generate", "match"] { #expect(help.console.stdoutText.contains(name)) }
        let sub = run(["help", "match"])
        #expect(sub.console.stdoutText.contains("USAGE: aasa-server match"))
        #expect(run(["validate", "--help"]).console.stdoutText.contains("--entitlements"))
    }

    @Test(
        "Usage errors: one line naming the problem, then the usage, exit 2",
        arguments: [
            (["frobnicate"], "unknown subcommand 'frobnicate'"),
            (["valdate"], "did you mean 'validate'?"),
            (["validate", "--confg", "x"], "did you mean '--config'?"),
            (["validate", "--config"], "option '--config' needs a value"),
            (["validate"], "give --config, --file or --entitlements"),
            (["generate", "--config", "x"], "give either --host HOST or --all --out DIR"),
            (["match", "--file", "x"], "give at least one URL"),
            (["validate", "--json=yes", "--config", "x"], "flag '--json' takes no value"),
            ([], "OVERVIEW"),
            (["serve", "--listen", "localhost:80"], "listen on an IP address"),
            (["serve", "--admin", "9090"], "has no port"),
            (["serve", "--bogus"], "unknown option '--bogus'"),
        ]
    )
    func usageErrors(arguments: [String], message: String) {
        let result = run(arguments)
        #expect(result.status == 2)
        #expect(result.console.stderr.contains(message), "\(result.console.stderr)")
        #expect(result.console.stdout.isEmpty)
        if !arguments.isEmpty {
            #expect(result.console.stderr.hasPrefix("error: "))
            #expect(result.console.stderr.contains("USAGE:"))
        }
    }

    @Test("validate: the bundled config is valid (exit 0); an unreadable file is exit 2")
    func validateExample() {
        let result = run(["validate", "--config", exampleConfig])
        #expect(result.status == 0, "\(result.console.stderr)")
        #expect(result.console.stderr.contains("valid — 0 errors"))
        let missing = run(["validate", "--config", "/nonexistent/config.json"])
        #expect(missing.status == 2)
        #expect(missing.console.stderr.contains("no such file"))
    }

    @Test("validate: errors exit 1 and print file:line:col, the rule, the JSON path and the source line")
    func validateErrors() throws {
        try withTemporaryDirectory { directory in
            let config = directory + "/config.json"
            try write(
                """
                {"version": 1, "sites": [{"hosts": ["example.com"],
                  "applinks": {"details": [{"apps": ["ABCDE12345.com.a"], "components": [{"/": "/a", "exclude": "yes"}]}]}}]}
                """,
                to: config
            )
            let result = run(["validate", "--config", config])
            #expect(result.status == 1)
            #expect(result.console.stderr.contains("\(config):2:97: error: \"exclude\" must be true or false"))
            #expect(result.console.stderr.contains("[type.mismatch]"))
            #expect(result.console.stderr.contains("at $.sites[0].applinks.details[0].components[0].exclude"))
            #expect(result.console.stderr.contains("^"))
            #expect(!result.console.stderr.contains("\u{1B}["), "no colour when stderr is not a terminal")
        }
    }

    @Test("match --config picks the tenant by host even when two included files put their sites at the same place")
    func matchIncludedTenants() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory + "/sites.d", withIntermediateDirectories: true)
            try write(
                #"{"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "include": ["sites.d/*.json"]}"#,
                to: directory + "/config.json"
            )
            for name in ["a", "b"] {
                try write(
                    #"{"hosts": ["\#(name).example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/\#(name)/*"}]}]}}"#,
                    to: directory + "/sites.d/\(name).json"
                )
            }
            let result = run(["match", "--config", directory + "/config.json", "https://b.example.com/b/1"])
            #expect(result.status == 0, "\(result.console.stdoutText)")
            #expect(result.console.stdoutText.contains("site b.example.com"))
        }
    }

    @Test("Colour only when stderr is a terminal, and never in --json output")
    func colour() throws {
        let file = repositoryRoot + "/Tests/AASATests/Fixtures/real-aasa/ElenaCristea__aasa"
        let terminal = CapturingConsole()
        terminal.stderrIsTerminal = true
        #expect(CommandLineTool.run(["validate", "--file", file], console: terminal) == 1)
        #expect(terminal.stderr.contains("\u{1B}[1;31merror\u{1B}[0m"))
        let json = CapturingConsole()
        json.stderrIsTerminal = true
        #expect(CommandLineTool.run(["validate", "--file", file, "--json"], console: json) == 1)
        #expect(!json.stdoutText.contains("\u{1B}"))
        #expect(!json.stderr.contains("\u{1B}"))
    }

    @Test("validate --json: counts and findings with rule, severity, file, line, column, path, message")
    func validateJSON() throws {
        let file = repositoryRoot + "/Tests/AASATests/Fixtures/real-aasa/edityomurti__apple-app-site-association-pls"
        let result = run(["validate", "--file", file, "--json"])
        #expect(result.status == 1)
        let root = try #require(JSONParser.parse(result.console.stdout).root)
        #expect(root["errors"]?.value.numberText == "1")
        #expect(root["warnings"]?.value.numberText == "1")
        let findings = try #require(root["findings"]?.arrayValue)
        let keys = findings.first?.objectValue?.map(\.key)
        #expect(keys == ["rule", "severity", "file", "line", "column", "path", "message"])
        #expect(findings.contains { $0["rule"]?.stringValue == "appid.format" && $0["line"]?.value.numberText == "17" })
        #expect(!result.console.stdoutText.contains("\u{1B}["))
    }

    @Test("validate --strict fails on warnings; a .json file name is warned about")
    func strict() throws {
        try withTemporaryDirectory { directory in
            let file = directory + "/apple-app-site-association.json"
            try write(#"{"applinks": {"details": [{"appIDs": ["ABCDE12345.a.b"], "components": [{"/": "/*"}]}]}}"#, to: file)
            let lenient = run(["validate", "--file", file])
            #expect(lenient.status == 0)
            #expect(lenient.console.stderr.contains("[file.json-suffix]"))
            #expect(run(["validate", "--file", file, "--strict"]).status == 1)
        }
    }

    @Test("validate --entitlements with --config and --app cross-checks the hosts")
    func entitlements() throws {
        try withTemporaryDirectory { directory in
            let entitlements = directory + "/App.entitlements"
            try write("applinks:example.com\napplinks:shop.example.org\n", to: entitlements)
            let result = run([
                "validate", "--entitlements", entitlements, "--config", exampleConfig, "--app", "ABCDE12345.com.example.shop",
            ])
            #expect(result.status == 1)
            #expect(result.console.stderr.contains("\(entitlements):2:1: error:"))
            #expect(result.console.stderr.contains("[entitlement.host-not-served]"))
            #expect(!result.console.stderr.contains("\(entitlements):1:"))
            #expect(run(["validate", "--entitlements", entitlements, "--app", "X.y"]).status == 2)
            // The config's app name is the same app: the same findings, no false app-missing ones.
            let named = run(["validate", "--entitlements", entitlements, "--config", exampleConfig, "--app", "shop"])
            #expect(named.status == 1 && named.console.stderr == result.console.stderr, "\(named.console.stderr)")
            #expect(!named.console.stderr.contains("entitlement.app-missing"))
            let unknown = run(["validate", "--entitlements", entitlements, "--config", exampleConfig, "--app", "shpo"])
            #expect(unknown.status == 2)
            #expect(
                unknown.console.stderr.contains(
                    "--app shpo: not an app ID (TEAMID.bundle.id) nor an app name of the config (shop, shopClip)"
                )
            )
        }
    }

    @Test("generate --host prints exactly the bytes the loader built; --pretty is the same content indented")
    func generateHost() throws {
        let compact = run(["generate", "--config", exampleConfig, "--host", "WWW.Example.com:443"])
        #expect(compact.status == 0)
        let config = try #require(FileManager.default.contents(atPath: exampleConfig))
        let loaded = ConfigLoader.load(configBytes: [UInt8](config), configPath: exampleConfig) { _ in .failure(FileReadError("")) }
        #expect(compact.console.stdout == loaded.site(forHost: "www.example.com")?.bytes)
        let pretty = run(["generate", "--config", exampleConfig, "--host", "example.com", "--pretty"])
        #expect(pretty.console.stdoutText.contains("\n  \"applinks\": {\n"))
        let reparsed = try #require(JSONParser.parse(pretty.console.stdout).root)
        #expect(JSONWriter.bytes(JSONOutput(reparsed)) == compact.console.stdout)
        #expect(run(["generate", "--config", exampleConfig, "--host", "nobody.example.net"]).status == 1)
        let unknown = run(["generate", "--config", exampleConfig, "--host", "nobody.example.net", "--allow-unknown"])
        #expect(unknown.status == 0)
        #expect(unknown.console.stdoutText == #"{"applinks":{"details":[]}}"#)
        #expect(unknown.console.stderr.contains("unknownHost"))
    }

    @Test("generate refuses to output anything when the config has errors, and honours unknownHost 404")
    func generateErrors() throws {
        try withTemporaryDirectory { directory in
            let config = directory + "/config.json"
            try write(
                #"{"version": 1, "sites": [{"hosts": ["a.com"], "webcredentials": {"apps": ["bad"]}}], "unknownHost": "404"}"#,
                to: config
            )
            let broken = run(["generate", "--config", config, "--host", "a.com"])
            #expect(broken.status == 1)
            #expect(broken.console.stdout.isEmpty)
            try write(
                #"{"version": 1, "sites": [{"hosts": ["a.com"], "webcredentials": {"apps": ["ABCDE12345.a.b"]}}], "unknownHost": "404"}"#,
                to: config
            )
            let notFound = run(["generate", "--config", config, "--host", "b.com"])
            #expect(notFound.status == 1)
            #expect(notFound.console.stderr.contains("404"))
        }
    }

    @Test("generate --all --out writes one file per host, and never over the config or a hosted file")
    func generateAll() throws {
        try withTemporaryDirectory { directory in
            let out = directory + "/out"
            let result = run(["generate", "--config", exampleConfig, "--all", "--out", out])
            #expect(result.status == 0, "\(result.console.stderr)")
            // A summary by default (a million hosts must not print a million lines); --list names each file.
            #expect(result.console.stdout.isEmpty)
            #expect(result.console.stderr.contains("wrote 2 files for 2 hosts of 1 site under \(out)"), "\(result.console.stderr)")
            let listed = run(["generate", "--config", exampleConfig, "--all", "--out", out, "--list"])
            #expect(listed.console.stdoutText.split(separator: "\n").count == 2)
            for host in ["example.com", "www.example.com"] {
                let path = "\(out)/\(host)/.well-known/apple-app-site-association"
                let generated = run(["generate", "--config", exampleConfig, "--host", host]).console.stdout
                #expect(FileManager.default.contents(atPath: path).map([UInt8].init) == generated)
            }
            // A verbatim file that sits exactly where the output would go is protected.
            let hosted = directory + "/site/a.com/.well-known/apple-app-site-association"
            let original = #"{"applinks": {"details": []}, "webcredentials": {"apps": ["ABCDE12345.com.example.shop"]}}"#
            try write(original, to: hosted)
            let config = directory + "/site/config.json"
            try write(
                #"{"version": 1, "sites": [{"hosts": ["a.com"], "file": "a.com/.well-known/apple-app-site-association"}]}"#,
                to: config
            )
            let refused = run(["generate", "--config", config, "--all", "--out", directory + "/site", "--pretty"])
            #expect(refused.status == 1)
            #expect(refused.console.stderr.contains("refusing to write"))
            #expect(FileManager.default.contents(atPath: hosted) == Data(original.utf8))
        }
    }

    @Test("match: explains decisions; exit 0 only when every URL opens an app")
    func match() throws {
        let opens = run(["match", "--config", exampleConfig, "https://example.com/product/42"])
        #expect(opens.status == 0)
        #expect(opens.console.stdoutText.contains("opens ABCDE12345.com.example.shop"))
        #expect(opens.console.stdoutText.contains("decided by details[0] component 1: {\"/\":\"/product/*\"}"))
        let mixed = run(["match", "--config", exampleConfig, "https://www.example.com/admin/users", "https://example.com/cart"])
        #expect(mixed.status == 1)
        #expect(mixed.console.stdoutText.contains("excluded by details[0] component 0"))
        let forcedHost = run(["match", "--config", exampleConfig, "--host", "example.com", "/product/1"])
        #expect(forcedHost.status == 0)
        let unknownHost = run(["match", "--config", exampleConfig, "https://elsewhere.net/product/1"])
        #expect(unknownHost.status == 1)
        #expect(unknownHost.console.stdoutText.contains("no site serves elsewhere.net"))
    }

    @Test("match --json: one object per line with url, app and decidedBy {details, rule, kind, pattern, exclude}")
    func matchJSON() throws {
        let file = repositoryRoot + "/Tests/AASATests/Fixtures/real-aasa/artsy__artsy-eigen-web-association"
        let result = run(["match", "--file", file, "--json", "https://www.artsy.net/artwork/x", "https://www.artsy.net/login"])
        let lines = result.console.stdoutText.split(separator: "\n")
        #expect(lines.count == 2)
        let first = try #require(JSONParser.parse(String(lines[0])).root)
        #expect(first["url"]?.stringValue == "https://www.artsy.net/artwork/x")
        #expect(first["app"]?.stringValue == "23KMWZ572J.net.artsy.artsy")
        let decided = try #require(first["decidedBy"]?.objectValue?.map(\.key))
        #expect(decided == ["details", "rule", "kind", "pattern", "exclude"])
        #expect(first["decidedBy"]?["kind"]?.stringValue == "path")
        let second = try #require(JSONParser.parse(String(lines[1])).root)
        #expect(second["app"]?.value.isNull == true)
        #expect(second["decidedBy"]?["pattern"]?.stringValue == "NOT /login")
        #expect(second["decidedBy"]?["exclude"]?.boolValue == true)
        #expect(result.status == 1)
    }

    @Test("match on a broken file reports the syntax error and exits 2")
    func matchBrokenFile() {
        let file = repositoryRoot + "/Tests/AASATests/Fixtures/real-aasa/Crossbell-Box__xLog__BROKEN-js-comment"
        let result = run(["match", "--file", file, "https://x.com/"])
        #expect(result.status == 2)
        #expect(result.console.stderr.contains(":3:17: error:"))
    }
}

extension JSONNode.Value {
    var numberText: String? {
        if case .number(let text) = self { return text }
        return nil
    }

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}
