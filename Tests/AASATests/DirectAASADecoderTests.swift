import Foundation
import Testing

@testable import AASA

/// A hosted document of the common shape is decoded without a JSON tree (``DirectAASADecoder``) when a
/// serving load keeps only its bytes: whatever the reader takes must be the document the tree's way gives,
/// value for value, and a document it hands on as checked must have no finding the tree's way.
@Suite("Hosted documents decoded without a tree")
struct DirectAASADecoderTests {
    /// Every stored value spelt out, positions and paths left out (the direct reader keeps none).
    static func values(_ value: Any) -> String {
        if value is Provenance || value is AASA.SourceLocation || value is JSONPath { return "-" }
        let mirror = Mirror(reflecting: value)
        if mirror.children.isEmpty { return String(describing: value) }
        let children = mirror.children.map { "\($0.label ?? "_")=\(values($0.value))" }
        return "\(type(of: value))(" + children.joined(separator: ", ") + ")"
    }

    /// What the tree's way finds: the parser's and decoder's findings, then the check's.
    static func treeFindings(_ bytes: [UInt8]) -> (document: AASADocument?, decoding: [Diagnostic], checking: [Diagnostic]) {
        let tree = AASADecoder.decode(bytes)
        var checking = tree.document.map(AASAValidator.validate) ?? []
        checking += AASAValidator.validateSize(bytes.count, of: tree.document)
        return (tree.document, tree.diagnostics, checking)
    }

    /// The reader's promises for `bytes`, whatever they are; true when it took the document.
    @discardableResult
    static func agrees(_ bytes: [UInt8], _ name: String) -> Bool {
        let tree = treeFindings(bytes)
        let checked = DirectAASADecoder.checked(bytes)
        if checked != nil {
            #expect(tree.decoding.isEmpty && tree.checking.isEmpty, "\(name): checked without the tree, but the tree's way finds \(tree)")
        }
        guard let direct = bytes.withUnsafeBufferPointer({ DirectAASADecoder.decode($0) }) else { return false }
        #expect(tree.decoding.isEmpty, "\(name): taken by the reader, but the tree's way finds \(tree.decoding)")
        guard let document = tree.document else {
            Issue.record("\(name): taken by the reader, no document the tree's way")
            return true
        }
        #expect(values(direct) == values(document), "\(name): another document without the tree")
        #expect(AASARenderer.bytes(direct) == AASARenderer.bytes(document), "\(name)")
        let directRules = (AASAValidator.validate(direct) + AASAValidator.validateSize(bytes.count, of: direct)).map(\.rule).sorted()
        #expect(directRules == tree.checking.map(\.rule).sorted(), "\(name): other findings without the tree")
        #expect((checked != nil) == directRules.isEmpty, "\(name)")
        return true
    }

    static func largeDocument(components: Int) -> [UInt8] {
        let items =
            [#"{"/":"/admin/*","exclude":true,"comment":"admin stays in Safari"}"#]
            + (0..<components).map { #"{"/":"/collection-\#($0)/*","comment":"collection \#($0) pages"}"# }
        return Array(
            (#"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":["# + items.joined(separator: ",")
                + #"]}]},"webcredentials":{"apps":["ABCDE12345.com.example.shop"]}}"#).utf8
        )
    }

    @Test("The real corpus: every file the reader takes is the tree's document, and it takes most valid ones")
    func corpus() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.corpusDirectory).filter { !$0.hasSuffix(".md") }.sorted()
        #expect(names.count >= 55)
        var taken = 0
        var checked = 0
        for name in names {
            let bytes = try Fixtures.read(Fixtures.corpusDirectory + "/" + name)
            if Self.agrees(bytes, name) { taken += 1 }
            if DirectAASADecoder.checked(bytes) != nil { checked += 1 }
        }
        // Real files escape slashes and carry findings often; still a good share is of the common shape.
        #expect(taken >= 15, "the reader took \(taken) of \(names.count) real files")
        #expect(checked >= 5, "\(checked) real files checked without a finding")
    }

    @Test("The benchmark's 101 KB document and the common shapes are taken and checked, the same as the tree's")
    func commonShapes() {
        let large = Self.largeDocument(components: 1700)
        #expect(large.count > 100_000)
        #expect(Self.agrees(large, "large") && DirectAASADecoder.checked(large) != nil)
        let shapes = [
            ##"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/p/*","?":{"ref":"?*"},"#":"top","caseSensitive":false,"percentEncoded":true},{"/":"/q/*","?":"a=*","exclude":true}]}],"defaults":{"caseSensitive":false}},"appclips":{"apps":["ABCDE12345.com.example.shop.Clip"]}}"##,
            "{\n  \"applinks\": {\n    \"apps\": [],\n    \"details\": [\n      {\n        \"appID\": \"ABCDE12345.com.example.shop\",\n        \"paths\": [\"/buy/*\", \"NOT /buy/secret\"]\n      }\n    ]\n  },\n  \"activitycontinuation\": {\"apps\": [\"ABCDE12345.com.example.shop\"]}\n}\n",
            #"  {"webcredentials": {"apps": ["ABCDE12345.com.example.shop"]}, "applinks": {"details": []}}  "#,
        ]
        for (position, shape) in shapes.enumerated() { #expect(Self.agrees(Array(shape.utf8), "shape \(position)"), "shape \(position)") }
    }

    @Test("Whatever the tree's way has something to say about is left to it, with its findings")
    func declined() {
        let app = #""appIDs":["ABCDE12345.com.example.shop"]"#
        let cases: [(String, String)] = [
            ("an escape", #"{"applinks":{"details":[{\#(app),"components":[{"/":"\/p\/*"}]}]}}"#),
            ("non-ASCII", #"{"applinks":{"details":[{\#(app),"components":[{"/":"/café/*"}]}]}}"#),
            ("an unknown key", #"{"applinks":{"details":[{\#(app),"components":[{"/":"/p/*","excluded":true}]}]}}"#),
            (
                "substitution variables",
                #"{"applinks":{"substitutionVariables":{"v":["a"]},"details":[{\#(app),"components":[{"/":"/$(v)/*"}]}]}}"#
            ),
            ("a duplicate key", #"{"applinks":{"details":[{\#(app),\#(app),"components":[]}]}}"#),
            ("a number", #"{"applinks":{"details":[{\#(app),"components":[{"/":7}]}]}}"#),
            ("null", #"{"applinks":null}"#),
            ("a byte order mark", "\u{FEFF}{\"applinks\":{\"details\":[]}}"),
            ("content after the object", #"{"applinks":{"details":[]}} {}"#),
            ("details as an object", #"{"applinks":{"details":{"ABCDE12345.com.example.shop":{"paths":["*"]}}}}"#),
            ("no details", #"{"applinks":{}}"#),
            ("a service without apps", #"{"webcredentials":{}}"#),
            ("a config", #"{"version":1,"sites":[]}"#),
            ("truncated", #"{"applinks":{"details":[{\#(app),"components":[{"/":"/p/*"}"#),
        ]
        for (name, text) in cases {
            let bytes = Array(text.utf8)
            #expect(bytes.withUnsafeBufferPointer({ DirectAASADecoder.decode($0) }) == nil, "\(name)")
            #expect(DirectAASADecoder.checked(bytes) == nil, "\(name)")
        }
        // Taken, but the check finds something (a rule that repeats an earlier path): handed on, not checked.
        let repeated = Array(#"{"applinks":{"details":[{\#(app),"components":[{"/":"/a/*"},{"/":"/a/*"}]}]}}"#.utf8)
        #expect(Self.agrees(repeated, "repeated") && DirectAASADecoder.checked(repeated) == nil)
        #expect(!Self.treeFindings(repeated).checking.isEmpty)
    }

    @Test("Thousands of bytes changed, cut and repeated at random in common documents: the reader never disagrees with the tree")
    func mutations() throws {
        var generator = SplitMix(seed: 0x5EED_AA5A)
        let seeds = [
            Self.largeDocument(components: 12),
            Array(
                #"{"applinks":{"apps":[],"details":[{"appID":"ABCDE12345.com.example.shop","paths":["/a/*","NOT /b"],"defaults":{"percentEncoded":false}}]},"webcredentials":{"apps":["ABCDE12345.com.example.shop"]}}"#
                    .utf8
            ),
            Array(
                ##"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/p/*","?":{"a":"?*","b":"x"},"#":"*"}]}]}}"##
                    .utf8
            ),
        ]
        let alphabet = Array(#"{}[]":, \/"ab*?#.01tfn"#.utf8) + [0x0A, 0xC3]
        var taken = 0
        for round in 0..<3_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0...(generator.next() % 3) {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 4 {
                case 0: bytes[position] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: position)
                case 2: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: position)
                default: bytes.removeSubrange(position..<min(bytes.count, position + Int(generator.next() % 12)))
                }
                if bytes.isEmpty { bytes = [UInt8(ascii: "{")] }
            }
            if Self.agrees(bytes, "mutation \(round): \(String(decoding: bytes, as: UTF8.self))") { taken += 1 }
        }
        #expect(taken > 100, "the reader took \(taken) of the changed documents")
    }
}
