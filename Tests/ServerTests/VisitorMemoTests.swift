import Links
import Testing

@testable import Server

/// A loop's memory of User-Agents' classes: always the class the classifier gives, remembered only for
/// the User-Agents it saw, bounded in entries and length.
@Suite("Visitor classes remembered per loop")
struct VisitorMemoTests {
    static let agents = [
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 334.0.4.32.98",
        "curl/8.11.1",
        "",
    ]

    static func classify(_ memo: VisitorMemo, _ agent: [UInt8]) -> Visitor {
        agent.withUnsafeBufferPointer { memo.classify($0) }
    }

    @Test("Thousands of User-Agents, real ones repeated among random variations of them, each get the classifier's class")
    func sameClassAsTheClassifier() {
        let memo = VisitorMemo()
        var generator = SystemRandomNumberGenerator()
        // Variations differ from a real User-Agent in one byte, so slots are shared and replaced all the time.
        for _ in 0..<5_000 {
            var agent = Array(Self.agents.randomElement(using: &generator)!.utf8)
            if !agent.isEmpty, Bool.random(using: &generator) {
                agent[Int.random(in: 0..<agent.count, using: &generator)] = UInt8.random(in: 32...126, using: &generator)
            }
            let expected = agent.withUnsafeBufferPointer { Visitor.classify($0) }
            #expect(Self.classify(memo, agent) == expected, "\(String(decoding: agent, as: UTF8.self))")
        }
        #expect(memo.hits > 1_000, "the repeated real User-Agents are remembered")
    }

    @Test("A repeated User-Agent is a hit; one longer than the bound is classified every time and never kept")
    func boundedByLength() {
        let memo = VisitorMemo()
        let desktop = Array(Self.agents[3].utf8)
        #expect(Self.classify(memo, desktop) == .desktop && memo.hits == 0)
        #expect(Self.classify(memo, desktop) == .desktop && memo.hits == 1)
        let long = Array(
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) " + String(repeating: "x", count: VisitorMemo.longestRemembered)).utf8
        )
        #expect(Self.classify(memo, long) == .iPhone)
        #expect(Self.classify(memo, long) == .iPhone)
        #expect(memo.hits == 1, "a User-Agent over \(VisitorMemo.longestRemembered) bytes is not remembered")
    }
}
