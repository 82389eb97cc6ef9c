import Support
import Testing

@testable import AASA

@Suite("JSON parser")
struct JSONParserTests {
    /// The single error a broken document produces: rule, line, column.
    private func syntaxError(_ text: String) -> (String, Int, Int)? {
        let result = JSONParser.parse(text)
        #expect(result.root == nil)
        guard let error = result.diagnostics.first(where: { $0.severity == .error }), let location = error.location else {
            return nil
        }
        return (error.rule, location.line, location.column)
    }

    @Test("Values keep their line and column, counted in characters")
    func positions() throws {
        let text = "{\n  \"é\": [1, true],\n  \"b\": {\"c\": null}\n}"
        let root = try #require(JSONParser.parse(text).root)
        let members = try #require(root.objectValue)
        #expect(members.map(\.key) == ["é", "b"])
        #expect(members[0].keyLocation.line == 2 && members[0].keyLocation.column == 3)
        let array = try #require(members[0].value.arrayValue)
        // `"é": [` — the array starts at column 8 even though "é" is two bytes.
        #expect(members[0].value.location.column == 8)
        #expect(array[1].location.column == 12)
        #expect(members[1].value["c"]?.location.line == 3)
    }

    @Test("A position is three 32-bit numbers: a host or rule of a million-host config carries one")
    func compactPositions() {
        #expect(MemoryLayout<AASA.SourceLocation>.size == 12)
        #expect(MemoryLayout<Provenance>.size == 24)
        #expect(MemoryLayout<Located<HostPattern>>.stride == 48)
        // The largest input (a 256 MB config) fits; anything past 32 bits stops at the limit instead of
        // wrapping to a small number that would name the wrong place.
        var location = AASA.SourceLocation(offset: 256 << 20, line: 3_000_000, column: 70_000)
        #expect(location.offset == 256 << 20 && location.line == 3_000_000 && location.column == 70_000)
        location.offset = 1 << 40
        #expect(location.offset == Int(UInt32.max))
        #expect(AASA.SourceLocation(offset: 5, line: 1, column: 6) < AASA.SourceLocation(offset: 9, line: 1, column: 2))
    }

    @Test("Escapes, surrogate pairs and numbers decode exactly")
    func escapes() throws {
        let root = try #require(JSONParser.parse(#"["a\"b\\\/\n\u00e9\ud83d\ude00", -1.5e3, 0]"#).root)
        let items = try #require(root.arrayValue)
        #expect(items[0].stringValue == "a\"b\\/\né😀")
        guard case .number(let text) = items[1].value else {
            Issue.record("not a number")
            return
        }
        #expect(text == "-1.5e3")
    }

    @Test(
        "Each common mistake gets its own rule and points at the mistake",
        arguments: [
            ("{\"a\": 1,}", "json.trailing-comma", 1, 8),
            ("[1, 2,\n]", "json.trailing-comma", 1, 6),
            ("{\n  // note\n  \"a\": 1\n}", "json.comment", 2, 3),
            ("{\"a\": 1 /* x */}", "json.comment", 1, 9),
            ("{'a': 1}", "json.single-quote", 1, 2),
            ("{\"a\": \u{201C}b\u{201D}}", "json.smart-quote", 1, 7),
            ("{\"a\": \"/app/*\u{201D}\n}", "json.smart-quote", 1, 14),
            ("{\"a\": [1, 2", "json.truncated", 1, 12),
            ("{\"a\": \"unterminated", "json.truncated", 1, 20),
            ("{\"a\" 1}", "json.syntax", 1, 6),
            ("{\"a\": 1 \"b\": 2}", "json.syntax", 1, 9),
            ("{a: 1}", "json.syntax", 1, 2),
            ("{\"a\": 01}", "json.syntax", 1, 8),
            ("{\"a\": \"x\ty\"}", "json.syntax", 1, 9),
            ("{\"a\": \"\\x\"}", "json.syntax", 1, 8),
            ("{} {}", "json.syntax", 1, 4),
            ("{\"a\": tru}", "json.syntax", 1, 7),
            ("   ", "json.empty", 1, 4),
            ("", "json.empty", 1, 1),
        ]
    )
    func mistakes(text: String, rule: String, line: Int, column: Int) throws {
        let found = try #require(syntaxError(text))
        #expect(found.0 == rule)
        #expect(found.1 == line, "line of \(rule) in \(text.debugDescription)")
        #expect(found.2 == column, "column of \(rule) in \(text.debugDescription)")
    }

    @Test("Invalid UTF-8 is reported as an encoding problem")
    func invalidUTF8() throws {
        let result = JSONParser.parse([UInt8(ascii: "\""), 0xE9, UInt8(ascii: "\"")])
        #expect(result.diagnostics.first?.rule == "json.encoding")
    }

    @Test("A byte order mark is reported, and the document still parses")
    func byteOrderMark() throws {
        let result = JSONParser.parse([0xEF, 0xBB, 0xBF] + Array("{\"a\": 1}".utf8))
        #expect(result.root != nil)
        #expect(result.diagnostics.map(\.rule) == ["json.bom"])
        #expect(result.root?["a"]?.location.column == 7)
    }

    @Test("Duplicate keys are reported with the first occurrence's position")
    func duplicateKeys() throws {
        let result = JSONParser.parse("{\"a\": 1,\n \"a\": 2}", duplicateKeys: .warning)
        let finding = try #require(result.diagnostics.first)
        #expect(finding.rule == "json.duplicate-key")
        #expect(finding.severity == .warning)
        #expect(finding.location?.line == 2)
        #expect(finding.message.contains("line 1:2"))

        // Large objects index their keys; the same duplicates must be found, each naming the first.
        let keys = (0..<30).map { "\"k\($0)\": 1" } + ["\"k3\": 2", "\"k20\": 2", "\"k3\": 3"]
        let large = JSONParser.parse("{" + keys.joined(separator: ", ") + "}", duplicateKeys: .warning)
        #expect(large.diagnostics.map { String($0.message.prefix(9)) } == ["key \"k3\" ", "key \"k20\"", "key \"k3\" "])
        #expect(large.diagnostics.allSatisfy { $0.message.contains("line 1:") })
        #expect(large.diagnostics[0].message == large.diagnostics[2].message)
    }

    @Test("Nesting deeper than the limit is refused instead of overflowing the stack")
    func depthLimit() {
        let text = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let result = JSONParser.parse(text)
        #expect(result.root == nil)
        #expect(result.diagnostics.first?.rule == "json.too-deep")
    }

    @Test("Columns stay right on a long minified line")
    func longLine() throws {
        let members = (0..<2000).map { "\"k\($0)\": \"v\"" }.joined(separator: ",")
        let text = "{" + members + ",}"
        let found = try #require(syntaxError(text))
        #expect(found.0 == "json.trailing-comma")
        #expect(found.2 == text.count - 1)
    }

    @Test("The writer escapes what JSON requires and nothing else, and round-trips")
    func writer() throws {
        let value = JSONOutput.object([
            ("/", .string("/a/b?c\"d\\e\u{01}é")), ("n", .int(-3)), ("t", .bool(true)), ("z", .null), ("e", .array([])),
        ])
        let text = JSONWriter.string(value)
        #expect(text == #"{"/":"/a/b?c\"d\\e\u0001é","n":-3,"t":true,"z":null,"e":[]}"#)
        let reparsed = try #require(JSONParser.parse(text).root)
        #expect(JSONOutput(reparsed) == value)
        let pretty = JSONWriter.string(value, pretty: true)
        #expect(pretty.hasPrefix("{\n  \"/\": "))
        #expect(JSONOutput(try #require(JSONParser.parse(pretty).root)) == value)
    }

    /// Found by the fuzzer (scripts/fuzz, FuzzConfigLoader): a number cut off by the end of the file read
    /// past it and crashed `validate`, start-up, and a live reload of a config truncated to "-".
    @Test(
        "A number or literal cut off at the end of the file is a truncation finding, never a crash",
        arguments: ["-", "1e", "1.", "-0.", "[1e+", "{\"a\":-", "1E-", "{\"a\": 1e"]
    )
    func truncatedNumber(text: String) throws {
        let found = try #require(syntaxError(text))
        #expect(found.0 == "json.truncated", "\(text)")
    }
    /// Every position in a tree, in document order.
    private func allLocations(_ node: JSONNode) -> [AASA.SourceLocation] {
        switch node.value {
        case .array(let items): return [node.location] + items.flatMap(allLocations)
        case .object(let members): return [node.location] + members.flatMap { [$0.keyLocation] + allLocations($0.value) }
        default: return [node.location]
        }
    }

    @Test(
        "ASCII and non-ASCII documents get the same columns from the byte-count shortcut as from counting characters",
        arguments: ["[{\"a\": [1, 2]}, \"b\", {\"c\": {\"d\": null}}]", "[{\"é\": [1, 2]}, \"b\", {\"c\": {\"d\": null}}]"]
    )
    func columnsBothWays(text: String) throws {
        // Each value again on its own line after a line of padding: line starts move, columns must follow.
        let spread = text.replacingAll(", ", with: ",\n  ")
        for document in [text, spread] {
            let root = try #require(JSONParser.parse(document).root)
            for location in allLocations(root) {
                let before = Array(document.utf8)[..<location.offset]
                let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
                let characters = String(decoding: before[lineStart...], as: UTF8.self).unicodeScalars.count
                #expect(location.column == characters + 1, "\(document) at \(location.offset)")
                #expect(location.line == before.count { $0 == 0x0A } + 1)
            }
        }
    }

    @Test("A top-level array can be handed over item by item: the same items, in order, and nothing after a syntax error")
    func itemByItem() throws {
        let text = "[{\"a\": 1},\n {\"b\": [true]}, \"c\", [], {\"a\": 1, \"a\": 2}]"
        let whole = try #require(JSONParser.parse(text).root?.arrayValue)
        var seen: [(Int, [AASA.SourceLocation])] = []
        let streamed = JSONParser.parse(Array(text.utf8), duplicateKeys: .warning) { node, index in seen.append((index, allLocations(node)))
        }
        #expect(seen.map(\.0) == Array(0..<5))
        #expect(seen.map(\.1) == whole.map(allLocations))
        #expect(streamed.root?.arrayValue?.isEmpty == true)
        #expect(streamed.diagnostics.map(\.rule) == ["json.duplicate-key"])
        // An object is not streamed: it comes back whole.
        var calls = 0
        let object = JSONParser.parse(Array(#"{"a": [1, 2]}"#.utf8), duplicateKeys: .error) { _, _ in calls += 1 }
        #expect(calls == 0 && object.root?["a"]?.arrayValue?.count == 2)
        // A syntax error after two items: the parse has no root, whatever was handed over.
        let broken = JSONParser.parse(Array(#"[{"a": 1}, {"b": 2}, {"c" 3}]"#.utf8), duplicateKeys: .error) { _, _ in }
        #expect(broken.root == nil)
        #expect(broken.diagnostics.first?.rule == "json.syntax")
    }
}
