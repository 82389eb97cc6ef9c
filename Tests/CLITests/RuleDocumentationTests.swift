import Foundation
import TestSupport
import Testing

/// docs/rules.md's tables are the list users filter CI output by: every rule id the code emits is in
/// them, and every id in them is one the code emits. Read from the sources, so the two cannot drift.
@Suite("docs/rules.md documents every rule id")
struct RuleDocumentationTests {
    /// `"json.syntax"`, `"check.tls-alert"`: a dotted lower-case literal.
    static let ruleLiteral = #""([a-z][a-z0-9]*(?:\.[a-z0-9-]+)+)""#

    /// The ids the sources emit: a literal right after a severity (`.error, "rule"`, also across a line
    /// break), or given as `rule:` / assigned to `.rule`, or passed to a local `error("rule", …)` helper.
    static func emittedIDs() throws -> Set<String> {
        let forms = [
            #"\.(?:error|warning|info|pass)\s*,\s*"# + ruleLiteral,
            #"Diagnostic\(\s*[\w.]+\s*,\s*"# + ruleLiteral,
            #"\brule:\s*"# + ruleLiteral,
            #"\.rule\s*=\s*"# + ruleLiteral,
            #"\b(?:error|warning)\(\s*"# + ruleLiteral,
            // A (rule, …) tuple whose id is chosen at run time.
            #"\(\s*"# + ruleLiteral + #"\s*,\s*""#,
        ].map { try! NSRegularExpression(pattern: $0) }
        var ids = Set<String>()
        let sources = TestPaths.repositoryRoot + "/Sources"
        let files = FileManager.default.enumerator(atPath: sources)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        #expect(files.count > 50)
        for file in files {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            let range = NSRange(text.startIndex..., in: text)
            for form in forms {
                for match in form.matches(in: text, range: range) {
                    guard let id = Range(match.range(at: 1), in: text).map({ String(text[$0]) }) else { continue }
                    ids.insert(id)
                }
            }
        }
        // Dotted literals that are not rules: the entitlement key and host names in examples.
        return ids.filter { !$0.hasPrefix("com.") && !$0.hasSuffix(".com") && !$0.hasSuffix(".json") }
    }

    /// The ids in docs/rules.md's two tables (`validate` and `check`).
    static func documentedIDs() throws -> (ids: Set<String>, families: [String]) {
        let readme = try String(contentsOfFile: TestPaths.repositoryRoot + "/docs/rules.md", encoding: .utf8)
        var ids = Set<String>()
        var families: [String] = []
        let code = try NSRegularExpression(pattern: #"`([a-z][a-z0-9]*(?:\.[a-z0-9*-]+)+)`"#)
        for line in readme.split(separator: "\n") where line.hasPrefix("| ") {
            let text = String(line)
            for match in code.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let id = Range(match.range(at: 1), in: text).map({ String(text[$0]) }) else { continue }
                if id.hasSuffix(".*") { families.append(String(id.dropLast())) } else { ids.insert(id) }
            }
        }
        return (ids, families)
    }

    @Test("Every rule id in the sources is in docs/rules.md's tables")
    func everyEmittedRuleIsDocumented() throws {
        let emitted = try Self.emittedIDs()
        #expect(emitted.count > 150, "the extraction found \(emitted.count) ids")
        #expect(emitted.contains("json.syntax") && emitted.contains("check.timeout") && emitted.contains("tls.expired"))
        let (documented, families) = try Self.documentedIDs()
        let missing = emitted.filter { id in !documented.contains(id) && !families.contains { id.hasPrefix($0) } }.sorted()
        #expect(missing.isEmpty, "rule ids the code emits that docs/rules.md does not list: \(missing)")
    }

    @Test("Every rule id in docs/rules.md's tables is one the sources emit")
    func everyDocumentedRuleExists() throws {
        let emitted = try Self.emittedIDs()
        let (documented, _) = try Self.documentedIDs()
        // Table cells also name config keys, files and commands in backticks; only rule-shaped ids of a
        // known family are compared.
        let familyNames = Set(emitted.map { String($0.prefix { $0 != "." }) })
        let stale = documented.filter { id in
            familyNames.contains(String(id.prefix { $0 != "." })) && !emitted.contains(id) && !id.hasSuffix(".json")
        }.sorted()
        #expect(stale.isEmpty, "docs/rules.md lists rule ids no code emits: \(stale)")
    }
}

/// Comments cite the format document by section (`docs/aasa-format.md §3.3`, `C4`): every cited section
/// and contested point exists there, so a renumbering cannot leave a comment pointing at nothing.
@Suite("Source comments cite sections that exist")
struct FormatCitationTests {
    @Test("every docs/aasa-format.md § and C-number a source comment cites is a heading or table row")
    func citationsResolve() throws {
        let root = TestPaths.repositoryRoot
        let format = try String(contentsOfFile: root + "/docs/aasa-format.md", encoding: .utf8)
        let headings = Set(
            format.split(separator: "\n").compactMap { line -> String? in
                guard line.hasPrefix("#"), let number = line.split(separator: " ").dropFirst().first else { return nil }
                return String(number.trimmingCharacters(in: CharacterSet(charactersIn: ".")))
            }
        )
        let contested = Set(
            format.split(separator: "\n").filter { $0.hasPrefix("| C") }.compactMap {
                $0.split(separator: "|").first?.trimmingCharacters(in: .whitespaces)
            }
        )
        #expect(headings.contains("3.3") && contested.contains("C11"))
        let citation = try NSRegularExpression(pattern: #"docs/aasa-format\.md ((?:§[0-9.]+[,–\- ]*|C[0-9]+[, ]*|swcutil|WWDC19|tr)*)"#)
        let sources = root + "/Sources"
        let files = FileManager.default.enumerator(atPath: sources)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        var cited = 0
        for file in files {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            for match in citation.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let list = Range(match.range(at: 1), in: text).map({ String(text[$0]) }) else { continue }
                let sections = list.split(whereSeparator: { ", –-".contains($0) }).filter { $0.hasPrefix("§") || $0.hasPrefix("C") }
                for section in sections {
                    cited += 1
                    let name =
                        section.hasPrefix("§")
                        ? String(section.dropFirst()).trimmingCharacters(in: CharacterSet(charactersIn: ".")) : String(section)
                    #expect(
                        headings.contains(name) || contested.contains(name),
                        "\(file) cites \(section), which docs/aasa-format.md does not have"
                    )
                }
            }
        }
        #expect(cited > 15)
    }
}
