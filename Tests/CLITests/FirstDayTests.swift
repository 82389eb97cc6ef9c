import AASA
import Foundation
import Posix
import TestSupport
import Testing

@testable import CLI

/// The traps a new user hits on the first day: standard input, configs given as files, certificates that
/// do not cover a host, CI-friendly match, and the example configs themselves.
@Suite("A user's first day")
struct FirstDayTests {
    func tool(_ arguments: [String], input: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try runTool([TestPaths.serverExecutable] + arguments, directory: repositoryRoot, input: input.map { Array($0.utf8) })
        return (result.status, String(decoding: result.stdout, as: UTF8.self), result.stderr)
    }

    func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-first-day-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("- reads standard input wherever a file is read: validate --file/--config/--entitlements, match --file, generate --config")
    func standardInput() throws {
        let document = #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.a.b"], "components": [{"/": "/p/*"}]}]}}"#
        let valid = try tool(["validate", "--file", "-"], input: document)
        #expect(valid.status == 0)
        #expect(valid.stderr.contains("<stdin>: valid"))
        let empty = try tool(["validate", "--file", "-"], input: "{}")
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("<stdin>:1:1: error:") && empty.stderr.contains("[document.no-app]"))
        let config = try String(contentsOfFile: exampleConfig, encoding: .utf8)
        #expect(try tool(["validate", "--config", "-"], input: config).status == 0)
        let entitlements = try tool(["validate", "--entitlements", "-"], input: "applinks:example.com\n")
        #expect(entitlements.status == 0, "\(entitlements.stderr)")
        let matched = try tool(["match", "--file", "-", "https://x.example/p/1"], input: document)
        #expect(matched.status == 0 && matched.stdout.contains("opens ABCDE12345.com.a.b"))
        let generated = try tool(["generate", "--config", "-", "--host", "example.com"], input: config)
        #expect(generated.status == 0 && generated.stdout.hasPrefix(#"{"applinks""#))
        let twice = try tool(["validate", "--config", "-", "--entitlements", "-"], input: config)
        #expect(twice.status == 2 && twice.stderr.contains("only one input can be standard input"))
    }

    @Test("An aasa-server config given to --file is recognised and the message says to use --config")
    func configAsFile() throws {
        let result = try tool(["validate", "--file", "config/example.json"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("[file.is-config]") && result.stderr.contains("validate --config FILE"))
        #expect(!result.stderr.contains("[key.unknown]") && !result.stderr.contains("[file.json-suffix]"), "one cause, one finding")
    }

    @Test("Every example config validates from a fresh clone (TLS examples with --no-certificates, as documented)")
    func examplesValidate() throws {
        let directories = ["config", "config/examples"]
        var checked = 0
        for directory in directories {
            for name in try FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/" + directory).sorted()
            where name.hasSuffix(".json") && name != "aasa-server.schema.json" {
                let path = directory + "/" + name
                let text = try String(contentsOfFile: repositoryRoot + "/" + path, encoding: .utf8)
                // The HTTPS example names certificate files the user makes (its comment says how).
                let arguments = ["validate", "--config", path] + (text.contains("\"certificates\"") ? ["--no-certificates"] : [])
                let result = try tool(arguments)
                #expect(result.status == 0, "\(path): \(result.stderr)")
                checked += 1
            }
        }
        #expect(checked >= 5)
        #expect(try tool(["validate", "--config", "deploy/systemd/config.json"]).status == 0)
    }

    @Test("Hosts no certificate covers are an error naming them (tls.host-uncovered); a dev-cert certificate in serve is a warning")
    func certificateCoverage() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let made = try tool(["dev-cert", "--host", "example.com", "--out", directory + "/tls"])
        #expect(made.status == 0)
        func config(certificateHosts: String) -> String {
            #"""
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
             "sites": [{"hosts": ["example.com", "www.example.com"], "webcredentials": {"apps": ["shop"]}}],
             "server": {"listen": [{"address": "127.0.0.1", "port": 8443, "tls": true}],
                        "certificates": [{"hosts": \#(certificateHosts), "certificate": "tls/cert.pem", "key": "tls/key.pem"}]}}
            """#
        }
        try Data(config(certificateHosts: #"["example.com"]"#).utf8).write(to: URL(fileURLWithPath: directory + "/config.json"))
        let uncovered = try tool(["validate", "--config", directory + "/config.json"])
        #expect(uncovered.status == 1)
        #expect(uncovered.stderr.contains(#"error: no certificate covers "www.example.com""#), "\(uncovered.stderr)")
        #expect(uncovered.stderr.contains("[tls.host-uncovered]"))
        #expect(uncovered.stderr.contains("[tls.dev-certificate]"), "made by dev-cert: only developer mode trusts it")
        // Without the certificate files (CI lacks the secrets), the declared hosts decide.
        let declared = try tool(["validate", "--config", directory + "/config.json", "--no-certificates"])
        #expect(declared.status == 1 && declared.stderr.contains("[tls.host-uncovered]"))
        #expect(!declared.stderr.contains("[tls.dev-certificate]"))
        try Data(config(certificateHosts: #"["example.com", "www.example.com"]"#).utf8).write(
            to: URL(fileURLWithPath: directory + "/config.json")
        )
        #expect(try tool(["validate", "--config", directory + "/config.json", "--no-certificates"]).status == 0)
        // The files still name only example.com: reading them finds www uncovered.
        let real = try tool(["validate", "--config", directory + "/config.json"])
        #expect(real.status == 1 && real.stderr.contains("[tls.san-mismatch]"))
    }

    @Test("match --expect APP|none exits 1 when the prediction differs; --ios 12 checks the legacy output")
    func matchForCI() throws {
        let shop = "ABCDE12345.com.example.shop"
        #expect(try tool(["match", "--config", "config/example.json", "--expect", shop, "https://example.com/product/1"]).status == 0)
        #expect(try tool(["match", "--config", "config/example.json", "--expect", "none", "https://example.com/admin/x"]).status == 0)
        let wrong = try tool(["match", "--config", "config/example.json", "--expect", shop, "https://example.com/admin/x"])
        #expect(wrong.status == 1 && wrong.stdout.contains("MISMATCH: expected \(shop), got none"))
        let legacy = try tool(["match", "--config", "config/example.json", "--ios", "12", "--expect", shop, "https://example.com/cart"])
        #expect(legacy.status == 0 && legacy.stdout.contains("decided by details[1] path"), "\(legacy.stdout)")
        #expect(try tool(["match", "--config", "config/example.json", "--legacy", "https://example.com/cart"]).stdout.contains("iOS 12"))
        let schemeless = try tool(["match", "--config", "config/example.json", "example.com/product/1"])
        #expect(schemeless.status == 1 && schemeless.stdout.contains("missing scheme"))
        #expect(try tool(["match", "--config", "config/example.json", "--ios", "twelve", "https://example.com/"]).status == 2)
    }

    @Test("generate --host prints only that site's findings; --all writes wildcard hosts under _wildcard.<domain>")
    func generateScope() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = #"""
            {"version": 1, "apps": {"a": "ABCDE12345.com.a.b"},
             "sites": [
               {"hosts": ["one.example.com"], "applinks": {"details": [{"apps": ["a"], "components": [{"/": "/x", "?": {"q": "*"}, "exclude": true}, {"/": "/*"}]}]}},
               {"hosts": ["two.example.com", "*.tenant.example.com"], "applinks": {"details": [{"apps": ["a"], "components": [{"/": "/y"}]}]}}
             ]}
            """#
        try Data(config.utf8).write(to: URL(fileURLWithPath: directory + "/config.json"))
        let one = try tool(["generate", "--config", directory + "/config.json", "--host", "one.example.com"])
        let two = try tool(["generate", "--config", directory + "/config.json", "--host", "two.example.com"])
        #expect(one.status == 0 && two.status == 0)
        #expect(one.stderr.contains("[query.matches-absent]"), "site one's own finding: \(one.stderr)")
        #expect(!two.stderr.contains("[query.matches-absent]"), "not site two's: \(two.stderr)")
        let all = try tool(["generate", "--config", directory + "/config.json", "--all", "--out", directory + "/out"])
        #expect(all.status == 0)
        #expect(
            FileManager.default.fileExists(atPath: directory + "/out/_wildcard.tenant.example.com/.well-known/apple-app-site-association")
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/out").allSatisfy { !$0.contains("*") })
        #expect(all.stderr.contains("wildcard hosts are written as _wildcard.<domain>"))
    }

    @Test("An entitlement listed twice, once with a port, names both entries")
    func duplicateEntitlements() throws {
        let result = try tool(["validate", "--entitlements", "-"], input: "applinks:example.com\napplinks:example.com:8080\n")
        #expect(
            result.stderr.contains(#""applinks:example.com:8080" and "applinks:example.com" (line 1) name the same host"#),
            "\(result.stderr)"
        )
    }

    @Test("--version names the commit the binary was built from")
    func versionCommit() throws {
        let result = try tool(["--version"])
        let head = try runTool(["git", "-C", repositoryRoot, "rev-parse", "--short=12", "HEAD"])
        let commit = String(decoding: head.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        // A checkout without git history (an exported tree) says "unknown" rather than something wrong.
        #expect(result.stdout.contains("(commit \(head.status == 0 ? commit : "unknown");"), "\(result.stdout)")
    }
}

@Suite("dev's starter config and device guide (no network)")
struct DevGuideTests {
    @Test("--app replaces only the app ID's literal; an edited file without apps.app is left alone")
    func starterAppUpdate() {
        let starter = Array(StarterConfig.text(hosts: ["dev.example.com"], app: StarterConfig.placeholderApp).utf8)
        guard case .updated(let previous, let bytes) = StarterConfig.updatingApp(in: starter, to: "ABCDE12345.com.example.real") else {
            Issue.record("expected an update")
            return
        }
        #expect(previous == StarterConfig.placeholderApp)
        let expected = String(decoding: starter, as: UTF8.self).replacingOccurrences(
            of: StarterConfig.placeholderApp,
            with: "ABCDE12345.com.example.real"
        )
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        #expect(StarterConfig.updatingApp(in: bytes, to: "ABCDE12345.com.example.real") == .unchanged)
        #expect(StarterConfig.updatingApp(in: Array(#"{"apps": {"shop": "A.b"}}"#.utf8), to: "ABCDE12345.com.x") == .notApplicable)
        // Escapes inside the literal are skipped correctly.
        let escaped = Array(#"{"apps": {"app": "ABCDE12345.com.a\"b"}, "x": "y"}"#.utf8)
        guard case .updated(_, let replaced) = StarterConfig.updatingApp(in: escaped, to: "ABCDE12345.com.c") else {
            Issue.record("expected an update")
            return
        }
        #expect(String(decoding: replaced, as: UTF8.self) == #"{"apps": {"app": "ABCDE12345.com.c"}, "x": "y"}"#)
    }

    func guide(listening: [ServerSettings.Listener], publicAddresses: [String] = []) -> DeviceGuide {
        DeviceGuide(
            hosts: ["dev.example.com"],
            listening: listening,
            interfaces: [
                .init(interface: "lo", address: "127.0.0.1", isIPv6: false, isLoopback: true, isLinkLocal: false),
                .init(interface: "wlan0", address: "192.168.1.20", isIPv6: false, isLoopback: false, isLinkLocal: false),
                .init(interface: "wlan0", address: "fe80::1", isIPv6: true, isLoopback: false, isLinkLocal: true),
                .init(interface: "wlan0", address: "fd00::20", isIPv6: true, isLoopback: false, isLinkLocal: false),
            ],
            publicAddresses: publicAddresses,
            caCertificatePath: ".aasa-dev/ca.pem",
            profilePath: ".aasa-dev/aasa-dev-ca.mobileconfig",
            caFingerprint: "AB:CD"
        )
    }

    @Test("The phone is offered the LAN addresses the listeners cover, never loopback or link-local; warnings for what a phone cannot use")
    func reachable() {
        let all = guide(listening: [
            .init(address: "0.0.0.0", port: 443, tls: true), .init(address: "::", port: 443, tls: true),
            .init(address: "0.0.0.0", port: 80), .init(address: "::", port: 80),
        ])
        #expect(all.reachableAddresses.map(\.address) == ["192.168.1.20", "fd00::20"])
        #expect(all.warnings.isEmpty)
        #expect(all.text.contains("https://192.168.1.20/ca.mobileconfig"))
        // The CA profile over plain HTTP, as a QR code: the phone does not trust the CA yet.
        #expect(all.profileURL == "http://192.168.1.20/ca.mobileconfig")
        #expect(all.text.contains("The CA profile, http://192.168.1.20/ca.mobileconfig, for the phone's camera:"))
        #expect(all.text.contains("--resolve dev.example.com:443:127.0.0.1 -sI https://dev.example.com/.well-known"))
        let v4 = guide(listening: [.init(address: "0.0.0.0", port: 8443, tls: true), .init(address: "0.0.0.0", port: 8080)])
        #expect(v4.reachableAddresses.map(\.address) == ["192.168.1.20"])
        #expect(v4.warnings.count == 1 && v4.warnings[0].contains("port 8443"))
        #expect(v4.text.contains("https://192.168.1.20:8443/ca.mobileconfig"), "a URL carries its port when it is not 443")
        #expect(v4.profileURL == "http://192.168.1.20:8080/ca.mobileconfig")
        let loopback = guide(listening: [.init(address: "127.0.0.1", port: 8443, tls: true), .init(address: "127.0.0.1", port: 8080)])
        #expect(loopback.reachableAddresses.isEmpty)
        #expect(loopback.warnings.first?.contains("loopback only") == true)
        // No address found: none is invented (the interfaces' own LAN address is not shown as reachable either).
        #expect(!loopback.text.contains("192.168."), "\(loopback.text)")
        #expect(loopback.text.contains("No LAN address of this machine was found; pass the one the phone reaches with --public-address"))
        #expect(loopback.text.contains("https://LAN-ADDRESS:8443/ca.mobileconfig"))
        #expect(loopback.text.contains("address=/dev.example.com/LAN-ADDRESS"))
        #expect(
            loopback.profileURL == nil && loopback.text.contains("(No QR code: no LAN address with a plain-HTTP listener to put in it.)")
        )
        #expect(!all.text.contains("accepts any certificate") && all.text.contains("does not trust, but not an invalid one"))
        let container = guide(listening: [.init(address: "0.0.0.0", port: 443, tls: true)], publicAddresses: ["10.1.2.3"])
        #expect(container.reachableAddresses.map(\.address) == ["10.1.2.3"])
        #expect(container.text.contains("address=/dev.example.com/10.1.2.3"))
        #expect(container.warnings.isEmpty, "a wildcard listener hears the forwarded address")
        // A public address nothing listens on is said, for loopback and for another specific address.
        let unheard = guide(listening: [.init(address: "127.0.0.1", port: 443, tls: true)], publicAddresses: ["192.168.1.50"])
        #expect(unheard.warnings.first?.contains("nothing forwards that to loopback") == true, "\(unheard.warnings)")
        let elsewhere = guide(listening: [.init(address: "192.168.1.20", port: 443, tls: true)], publicAddresses: ["192.168.1.50"])
        #expect(elsewhere.warnings.first?.contains("--public-address 192.168.1.50: no listener is on it") == true, "\(elsewhere.warnings)")
        let same = guide(listening: [.init(address: "127.0.0.1", port: 443, tls: true)], publicAddresses: ["127.0.0.1"])
        #expect(same.warnings.isEmpty, "\(same.warnings)")
    }
}
