import Testing

@testable import AASA

@Suite("JSON paths: compared step by step, equal exactly when their texts are")
struct JSONPathTests {
    /// Keys whose texts come close to each other or to an index's: identifiers, digits, dots, brackets,
    /// quotes and backslashes, the empty key.
    static let keys = ["a", "b", "ab", "0", "1", "a.b", "a\"]", "[0]", "\\", "\"", "", "sites", "hosts", "_x"]

    static func randomPath(using generator: inout some RandomNumberGenerator) -> JSONPath {
        var path = JSONPath.root
        for _ in 0..<Int.random(in: 0...3, using: &generator) {
            if Bool.random(using: &generator) {
                path = path.key(keys.randomElement(using: &generator)!)
            } else {
                path = path.index(Int.random(in: 0...2, using: &generator))
            }
        }
        return path
    }

    @Test("For random paths built apart (sharing no steps), == agrees with comparing the texts, and equal paths hash alike")
    func agreesWithText() {
        var generator = SystemRandomNumberGenerator()
        let paths = (0..<400).map { _ in Self.randomPath(using: &generator) }
        var equalPairs = 0
        for left in paths {
            for right in paths {
                let sameText = left.description == right.description
                #expect((left == right) == sameText, "\(left) against \(right)")
                if sameText {
                    equalPairs += 1
                    #expect(left.hashValue == right.hashValue)
                }
            }
        }
        #expect(equalPairs > paths.count, "some pairs built apart are equal, not only each path with itself")
    }

    @Test("Shared steps, the root, and a key against an index of the same text")
    func edges() {
        let sites = JSONPath.root.key("sites")
        #expect(sites.index(3) == JSONPath.root.key("sites").index(3))
        #expect(sites.index(3).key("hosts") != sites.index(4).key("hosts"))
        #expect(JSONPath.rootIndex(5) == JSONPath.root.index(5) && JSONPath.rootIndex(5000) == JSONPath.root.index(5000))
        #expect(JSONPath.root == JSONPath.root && JSONPath.root != JSONPath.root.index(0))
        #expect(JSONPath.root.key("0") != JSONPath.root.index(0))
        #expect(JSONPath.root.key("a").key("b") != JSONPath.root.key("a.b"))
        #expect(sites != sites.index(0) && sites.index(0) != sites)
    }
}
