import Foundation
import TestSupport
import Testing

/// README is a front page and docs/ a map: both held to what the code does.
@Suite("README and docs")
struct DocumentationTests {
    static let root = TestPaths.repositoryRoot

    static func read(_ path: String) throws -> String { try String(contentsOfFile: root + "/" + path, encoding: .utf8) }

    static var pages: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root + "/docs")) ?? []).filter { $0.hasSuffix(".md") }.sorted()
    }

    @Test("README is a front page: under 250 lines, the two commands first, every command in its table")
    func frontPage() throws {
        let readme = try Self.read("README.md")
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count < 250)
        let firstBlock = try #require(readme.components(separatedBy: "```bash\n").dropFirst().first?.components(separatedBy: "```").first)
        #expect(firstBlock.hasPrefix("swift run aasa-server serve "))
        #expect(firstBlock.contains("SWIFT_BACKTRACE=enable=no timeout 1200 swift test"))
        // The test command CI runs is README's, verbatim.
        #expect(try Self.read(".ci/run").contains("SWIFT_BACKTRACE=enable=no timeout 1200 swift test"))
        let help = try runTool([TestPaths.serverExecutable, "--help"])
        let names = String(decoding: help.stdout, as: UTF8.self).split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), let word = line.split(separator: " ").first, !word.hasPrefix("-"),
                word.allSatisfy({ $0.isLetter || $0 == "-" })
            else {
                return nil
            }
            return String(word)
        }
        #expect(names.count >= 11, "\(names)")
        for name in names { #expect(readme.contains("| `\(name)` |"), "README's command table lacks \(name)") }
    }

    @Test("The walk-through runs as written: init, validate, and match printing exactly what README shows")
    func walkThrough() throws {
        let readme = try Self.read("README.md")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-walk-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The init command as README writes it (one command over two lines).
        let initText = try #require(
            readme.components(separatedBy: "   aasa-server init ").dropFirst().first?.components(separatedBy: "\n   ```").first
        )
        let initArguments = initText.replacingOccurrences(of: "\\\n", with: " ").split(separator: " ").map {
            String($0).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        let wrote = try runTool([TestPaths.serverExecutable, "init"] + initArguments, directory: directory)
        #expect(wrote.status == 0, "\(wrote.stderr)")
        #expect(readme.contains("aasa-server validate --config aasa-server.json"))
        #expect(try runTool([TestPaths.serverExecutable, "validate", "--config", "aasa-server.json"], directory: directory).status == 0)
        let console = try #require(readme.components(separatedBy: "   $ aasa-server match --config aasa-server.json ").dropFirst().first)
        let lines = console.split(separator: "\n", omittingEmptySubsequences: false)
        let url = String(lines[0])
        let shown = lines.dropFirst().prefix { !$0.hasPrefix("   ```") }.map { $0.dropFirst(3) }.joined(separator: "\n")
        let matched = try runTool([TestPaths.serverExecutable, "match", "--config", "aasa-server.json", url], directory: directory)
        #expect(String(decoding: matched.stdout, as: UTF8.self) == shown + "\n")

        // The link domain lines, added to the same config: valid, and served as README says.
        let snippet = try #require(
            readme.components(separatedBy: "**Links that work without the app.**").dropFirst().first?
                .components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first
        )
        let added = try #require(try JSONSerialization.jsonObject(with: Data(("{" + snippet + "}").utf8)) as? [String: Any])
        var config = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory + "/aasa-server.json")))
                as? [String: Any]
        )
        config["apps"] = added["apps"]
        var sites = try #require(config["sites"] as? [[String: Any]])
        sites[0]["links"] = added["links"]
        config["sites"] = sites
        config["server"] = ["listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0"]
        let text = String(decoding: try JSONSerialization.data(withJSONObject: config), as: UTF8.self)
        try write(text, to: directory + "/links.json")
        let linked = try runTool([TestPaths.serverExecutable, "validate", "--config", "links.json"], directory: directory)
        #expect(linked.status == 0 && linked.stderr.contains("0 errors, 0 warnings"), "\(linked.stderr)")
        let server = try ServerProcess(config: text)
        defer { server.stop() }
        func fetch(_ agent: String) throws -> String {
            let result = try runTool([
                "curl", "-s", "-D", "-", "-A", agent, "-H", "Host: www.example.com", "http://127.0.0.1:\(server.port)/product/42",
            ])
            return String(decoding: result.stdout, as: UTF8.self)
        }
        let iPhone = try fetch(
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Version/17.5 Mobile/15E148 Safari/604.1"
        )
        #expect(iPhone.hasPrefix("HTTP/1.1 200") && iPhone.contains("apple-itunes-app"), "\(iPhone)")
        let desktop = try fetch("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
        #expect(desktop.hasPrefix("HTTP/1.1 302") && desktop.contains("Location: https://shop.example.com/item/42"), "\(desktop)")
        let android = try fetch("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/126.0.0.0 Mobile Safari/537.36")
        #expect(
            android.hasPrefix("HTTP/1.1 302") && android.contains("Location: https://shop.example.com/item/42"),
            "no Android app: the web"
        )
    }

    @Test("Every docs page starts with the question it answers, and the map lists every page")
    func questions() throws {
        let map = try Self.read("docs/README.md")
        #expect(Self.pages.count >= 18)
        for page in Self.pages {
            let lines = try Self.read("docs/" + page).split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.first?.hasPrefix("# ") == true, "\(page)")
            #expect(
                lines.count > 2 && lines[1].isEmpty && lines[2].hasPrefix("*") && lines[2].hasSuffix("?*"),
                "\(page): \(lines.prefix(3))"
            )
            if page != "README.md" { #expect(map.contains("](\(page))"), "docs/README.md does not list \(page)") }
        }
    }

    @Test("Every relative link in README and docs points at a file that exists")
    func links() throws {
        let link = try NSRegularExpression(pattern: #"\]\(([^)#:]+)(#[^)]*)?\)"#)
        for file in ["README.md"] + Self.pages.map({ "docs/" + $0 }) {
            let text = try Self.read(file)
            let base = (file as NSString).deletingLastPathComponent
            for match in link.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                let path = (Self.root + "/" + base + "/" + target as NSString).standardizingPath
                #expect(FileManager.default.fileExists(atPath: path), "\(file) links to \(target), which does not exist")
            }
        }
    }

    @Test("docs/config-reference.md is what the JSON Schema gives, every key described")
    func configReference() throws {
        let checked = try runTool(["python3", Self.root + "/scripts/config-reference", "--check"])
        #expect(checked.status == 0, "\(String(decoding: checked.stdout, as: UTF8.self)) \(checked.stderr)")
        let page = try Self.read("docs/config-reference.md")
        let undescribed = page.split(separator: "\n").filter { $0.hasPrefix("| `") && $0.hasSuffix("|  |") }
        #expect(undescribed.isEmpty, "keys without a description: \(undescribed)")
        for key in ["`server.acme.lockStaleAfter`", "`server.fetchHostsPerWildcard`", "`sites[].applinks.details[].components[]./`"] {
            #expect(page.contains(key), "\(key)")
        }
    }
}
