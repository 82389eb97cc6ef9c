import Foundation
import Testing

@testable import AASA

/// The 55 real files in Fixtures/real-aasa (copied from shared/corpus, public data) as a regression corpus.
@Suite("Real-world AASA corpus")
struct CorpusTests {
    struct Entry: Sendable {
        var name: String
        var isValidJSON: Bool
        var notes: String
    }

    /// The table in index.md: file name, JSON status and the maintainers' notes.
    static let index: [Entry] = {
        guard let data = FileManager.default.contents(atPath: Fixtures.corpusDirectory + "/index.md") else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 8, cells[1].hasPrefix("`"), cells[1].hasSuffix("`") else { return nil }
            return Entry(name: String(cells[1].dropFirst().dropLast()), isValidJSON: cells[6] == "valid", notes: cells[7])
        }
    }()

    /// What each file must produce (rule@line:column); files not listed must produce no finding.
    /// Each entry is what index.md's notes imply (mixed formats, bad IDs, the "*" query trap…).
    static let expected: [String: [String]] = [
        "274737258__apple__BROKEN-smart-quote": ["json.smart-quote@8:18"],
        "Crossbell-Box__xLog__BROKEN-js-comment": ["json.comment@3:17"],
        "Crossbell-Box__xLog__BROKEN-trailing-commas": ["json.trailing-comma@13:21"],
        "Eugenneer__bach-deep-link__BROKEN-trailing-commas": ["json.trailing-comma@11:21"],
        "AL-Mustapha01__apple-app-site-association": ["details.appids-with-paths@6:7"],
        "Adophlidu__firefly.social": ["details.mixed-formats@5:13", "details.appid-ignored@9:26"],
        "AgoraIO-Community__Universal-Links-SwiftUI": ["details.mixed-formats@4:17", "appid.format@5:16"],
        "Aharonik1__furnis-app-site-association": ["applinks.apps-not-empty@11:13"],
        "AllysonRGardner__BS-AASA": [
            "query.matches-absent@9:19", "query.matches-absent@9:32", "query.matches-absent@9:46",
            "query.matches-absent@9:61",
        ],
        "CoderDanUK__apple-deep-link-test": ["details.mixed-formats@5:13"],
        "ElenaCristea__aasa": ["appid.format@6:18"],
        "Kemmey__TeslaWatch-Web": ["query.matches-absent@13:29"],
        "MussadiqAhmadJamil__DeepLink": ["details.mixed-formats@5:13"],
        "Provenance-Emu__provenance-emu.github.io": ["query.matches-absent@21:20", "rule.unreachable@24:11"],
        "artsy__artsy-eigen-web-association": ["pattern.fragment-in-path@20:11"],
        "cocoatype__kineo.app": ["applinks.missing@1:1"],
        "edityomurti__apple-app-site-association-pls": ["details.mixed-formats@4:12", "appid.format@17:17"],
        "element-hq__element-call__before-query-fix": ["query.matches-absent@13:15", "rule.unreachable@18:11"],
    ]

    static func bytes(_ name: String) throws -> [UInt8] { try Fixtures.read(Fixtures.corpusDirectory + "/" + name) }

    @Test("index.md lists exactly the files in the corpus (55)")
    func indexMatchesDirectory() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Fixtures.corpusDirectory).filter { $0 != "index.md" }
        #expect(Self.index.count == 55)
        #expect(Set(files) == Set(Self.index.map(\.name)))
    }

    @Test("Every file is classified as index.md says, with exactly the expected findings", arguments: index.map(\.name))
    func classify(name: String) throws {
        let entry = try #require(Self.index.first { $0.name == name })
        let result = AASAValidator.validateFile(try Self.bytes(name))
        let syntaxFailed = result.document == nil
        #expect(syntaxFailed == !entry.isValidJSON, "\(name): JSON status differs from index.md")
        if !entry.isValidJSON {
            #expect(name.contains("BROKEN"))
            #expect(result.diagnostics.first?.rule.hasPrefix("json.") == true)
        }
        let found = result.diagnostics.map { "\($0.rule)@\($0.location?.line ?? 0):\($0.location?.column ?? 0)" }
        #expect(found.sorted() == (Self.expected[name] ?? []).sorted(), "\(name)")
    }

    @Test(
        "Round trip: regenerating each valid file gives a document that matches identically",
        arguments: index.filter(\.isValidJSON).map(\.name)
    )
    func roundTrip(name: String) throws {
        let original = try #require(AASADecoder.decode(try Self.bytes(name)).document)
        let regenerated = AASARenderer.bytes(original)
        // Compact bytes are written directly; they must be what writing the rendered tree gives.
        #expect(regenerated == JSONWriter.bytes(AASARenderer.render(original)))
        let reparsed = try #require(AASADecoder.decode(regenerated).document)
        #expect(AASARenderer.bytes(reparsed) == regenerated, "rendering is stable")
        let before = Matcher(original)
        let after = Matcher(reparsed)
        let urls = SampleURLs.forDocument(original)
        for url in urls {
            let a = before.match(url)
            let b = after.match(url)
            #expect(a.app == b.app, "\(name) \(url)")
            #expect(a.decidedBy == b.decidedBy, "\(name) \(url)")
        }
    }

    @Test("Keys and strings that need escapes, long and short, are written by the compact writer as the tree's writer writes them")
    func escapedKeysAndStrings() throws {
        let long = String(repeating: "segment/", count: 80)
        let text = #"""
            {"applinks": {"substitutionVariables": {"q\"uote": ["a\\b", "\#(long)"], "plain": ["x"]},
             "details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [
               {"/": "/\u0001\#(long)*", "?": {"na\"me": "v\\al", "": "", "id": "?*"}, "#": "f\"", "comment": "c\n"},
               {"/": "", "?": "whole\"query", "exclude": true, "caseSensitive": false, "percentEncoded": true}]}]},
             "webcredentials": {"apps": ["ABCDE12345.com.example.app"]}}
            """#
        let document = try #require(AASADecoder.decode(Array(text.utf8)).document)
        let compact = AASARenderer.bytes(document)
        #expect(compact == JSONWriter.bytes(AASARenderer.render(document)))
        #expect(String(decoding: compact, as: UTF8.self).contains(#""na\"me":"v\\al""#))
        #expect(AASARenderer.immutableBytes(document).array == compact)
    }

    @Test("Sample URLs exercise both outcomes across the corpus")
    func samplesAreMeaningful() throws {
        var opened = 0
        var stayed = 0
        for entry in Self.index where entry.isValidJSON {
            guard let document = AASADecoder.decode(try Self.bytes(entry.name)).document else { continue }
            let matcher = Matcher(document)
            for url in SampleURLs.forDocument(document) {
                if matcher.match(url).app == nil { stayed += 1 } else { opened += 1 }
            }
        }
        #expect(opened > 100)
        #expect(stayed > 20)
    }
}

/// URLs derived from the patterns a document mentions: each wildcard filled in, with and without
/// the query and fragment the rule asks for.
enum SampleURLs {
    static func fill(_ pattern: String) -> String {
        var text = ""
        var rest = pattern[...]
        while let first = rest.first {
            if rest.hasPrefix("$("), let close = rest.firstIndex(of: ")") {
                text += "en"
                rest = rest[rest.index(after: close)...]
                continue
            }
            switch first {
            case "*": text += "abc"
            case "?": text += "z"
            default: text.append(first)
            }
            rest = rest.dropFirst()
        }
        return text
    }

    static func forDocument(_ document: AASADocument) -> [String] {
        var urls = ["https://example.com/", "https://example.com/unmatched/path"]
        for details in document.applinks?.details ?? [] {
            for path in details.paths ?? [] {
                let pattern = path.value.hasPrefix("NOT ") ? String(path.value.dropFirst(4)) : path.value
                let filled = fill(pattern)
                urls.append("https://example.com" + (filled.hasPrefix("/") ? filled : "/" + filled))
            }
            for component in details.components ?? [] {
                var path = fill(component.path ?? "/anything")
                if !path.hasPrefix("/") { path = "/" + path }
                var query = ""
                switch component.query {
                case .whole(let pattern): query = "?" + fill(pattern)
                case .items(let items): query = "?" + items.map { "\($0.name)=\(fill($0.pattern))" }.joined(separator: "&")
                case nil: break
                }
                let fragment = component.fragment.map { "#" + fill($0) } ?? ""
                urls.append("https://example.com" + path)
                urls.append("https://example.com" + path + query)
                urls.append("https://example.com" + path + query + fragment)
                urls.append("https://example.com" + path.uppercased() + query)
            }
        }
        return urls
    }
}
