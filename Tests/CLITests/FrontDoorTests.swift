import Foundation
import Glibc
import TestSupport
import Testing

@testable import CLI

/// The binary on its own: no repository around it, no config written yet.
@Suite("The front door: the built-in config and init")
struct FrontDoorTests {
    func emptyDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-front-door-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func tool(_ arguments: [String], in directory: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try runTool([TestPaths.serverExecutable] + arguments, directory: directory)
        return (result.status, String(decoding: result.stdout, as: UTF8.self), result.stderr)
    }

    @Test("The built-in config is config/example.json, byte for byte")
    func builtInIsTheExample() throws {
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: exampleConfig)))
        #expect(BuiltInConfig.bytes == file)
        #expect(BuiltInConfig.hosts == ["example.com", "www.example.com"])
    }

    @Test("serve with no --config in an empty directory serves the built-in example, says so and how to write your own; SIGHUP reloads it")
    func serveWithoutConfig() throws {
        let directory = try emptyDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try ServerProcess(
            config: "",
            command: ["serve", "--listen", "127.0.0.1:0", "--admin", "off"],
            currentDirectory: directory
        )
        defer { server.stop() }
        #expect(
            server.stderr.contains("no --config given: serving the built-in example config (example.com, www.example.com)"),
            "\(server.stderr)"
        )
        #expect(server.stderr.contains("aasa-server init --host HOST --app TEAMID.BUNDLE"))
        let expected = try tool(["generate", "--config", exampleConfig, "--host", "www.example.com"], in: directory)
        func fetch() throws -> (head: String, body: String) {
            let result = try runTool([
                "curl", "-s", "-D", "-", "-H", "Host: www.example.com",
                "http://127.0.0.1:\(server.port)/.well-known/apple-app-site-association",
            ])
            let text = String(decoding: result.stdout, as: UTF8.self)
            let parts = text.components(separatedBy: "\r\n\r\n")
            return (parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
        }
        let first = try fetch()
        #expect(first.head.hasPrefix("HTTP/1.1 200"))
        #expect(first.head.lowercased().contains("content-type: application/json"))
        #expect(first.body == expected.stdout)
        server.signal(SIGHUP)
        #expect(waitUntil(10) { server.stderr.contains("reloaded (SIGHUP): generation 2") }, "\(server.stderr)")
        #expect(try fetch().body == expected.stdout)
        #expect(!server.stderr.contains("error"), "\(server.stderr)")
        // certificates without --config reads the same built-in config.
        let certificates = try tool(["certificates"], in: directory)
        #expect(certificates.stdout.contains("example.com") && certificates.stdout.contains("www.example.com"), "\(certificates)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty, "nothing written where it ran")
    }

    @Test("init writes a commented starter config that validates and matches; it never replaces a file, and writes nothing invalid")
    func initWritesStarter() throws {
        let directory = try emptyDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let written = try tool(
            [
                "init", "--host", "example.com", "--host", "www.example.com", "--app", "shop=ABCDE12345.com.example.shop", "--app",
                "ABCDE12345.com.example.beta", "--path", "/product/*", "--exclude", "/product/secret/*", "--webcredentials",
            ],
            in: directory
        )
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.stderr.contains("wrote aasa-server.json: 2 hosts, 2 apps"))
        let path = directory + "/aasa-server.json"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains(#""comment""#) && text.contains(#""beta": "ABCDE12345.com.example.beta""#))
        let validated = try tool(["validate", "--config", "aasa-server.json"], in: directory)
        #expect(validated.status == 0 && validated.stderr.contains("0 errors, 0 warnings"), "\(validated.stderr)")
        // Every command init suggests runs as printed.
        #expect(written.stderr.contains("aasa-server match --config aasa-server.json https://example.com/product/example"))
        let opens = try tool(
            ["match", "--config", "aasa-server.json", "--expect", "shop", "https://example.com/product/example"],
            in: directory
        )
        #expect(opens.status == 0, "\(opens.stdout)")
        let excluded = try tool(
            ["match", "--config", "aasa-server.json", "--expect", "none", "https://www.example.com/product/secret/x"],
            in: directory
        )
        #expect(excluded.status == 0, "\(excluded.stdout)")
        let generated = try tool(["generate", "--config", "aasa-server.json", "--host", "www.example.com"], in: directory)
        #expect(generated.stdout.contains(#""webcredentials":{"apps":["ABCDE12345.com.example.shop","ABCDE12345.com.example.beta"]}"#))

        let again = try tool(["init", "--host", "other.example", "--app", "ABCDE12345.com.other.app"], in: directory)
        #expect(again.status == 1 && again.stderr.contains("aasa-server.json exists; not replaced"), "\(again.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text, "the user's file is untouched")

        let invalid = try tool(["init", "--host", "example.com", "--app", "TEAM.com.example.app", "--output", "bad.json"], in: directory)
        #expect(
            invalid.status == 1 && invalid.stderr.contains("[appid.format]") && invalid.stderr.contains("not written"),
            "\(invalid.stderr)"
        )
        #expect(!FileManager.default.fileExists(atPath: directory + "/bad.json"))

        #expect(try tool(["init", "--app", "ABCDE12345.com.example.app"], in: directory).status == 2)
        #expect(try tool(["init", "--host", "example.com"], in: directory).status == 2)
        let printed = try tool(["init", "--host", "example.com", "--app", "ABCDE12345.com.example.app", "--output", "-"], in: directory)
        #expect(printed.status == 0 && printed.stdout.hasPrefix("{") && printed.stdout.contains(#""app": "ABCDE12345.com.example.app""#))
    }

    @Test("The CLI reads a named pipe (process substitution) like standard input; serve refuses one, since it reads its config again")
    func pipes() throws {
        func shell(_ script: String) throws -> (status: Int32, stdout: String, stderr: String) {
            let result = try runTool(["env", "AASA=\(TestPaths.serverExecutable)", "bash", "-c", script], directory: repositoryRoot)
            return (result.status, String(decoding: result.stdout, as: UTF8.self), result.stderr)
        }
        let file = try shell(#""$AASA" validate --file <(printf '%s' '{"applinks":{"details":[]}}')"#)
        #expect(file.status == 1 && file.stderr.contains("[document.no-app]") && !file.stderr.contains("not a regular file"), "\(file)")
        let config = try shell(#""$AASA" validate --config <(cat config/example.json)"#)
        #expect(config.status == 0 && config.stderr.contains("valid — 0 errors"), "\(config)")
        let matched = try shell(#""$AASA" match --config <(cat config/example.json) https://example.com/product/1"#)
        #expect(matched.status == 0 && matched.stdout.contains("opens ABCDE12345.com.example.shop"), "\(matched)")
        let served = try shell(#""$AASA" serve --config <(cat config/example.json)"#)
        #expect(
            served.status == 2
                && served.stderr.contains("is a FIFO (named pipe), not a regular file: the server reads its config again at every reload"),
            "\(served)"
        )
        let checked = try shell(#""$AASA" serve --check-config --config <(cat config/example.json)"#)
        #expect(checked.status == 0, "\(checked)")
    }
}
