import Testing

@testable import HTTP1

@Suite("An answer kept as written, sent again while it is the one queued")
struct RenderedAnswerTests {
    let shared = SharedHeaders(status: 200, headers: [("Content-Type", "application/json")])
    let memo = RenderedAnswer(capacity: 4096)

    func document(_ text: String) -> PreparedResponse {
        PreparedResponse(shared: shared, headers: [("ETag", "\"1\"")], body: Array(text.utf8))
    }

    func encoded(_ response: PreparedResponse, _ date: DateLine, _ connection: ConnectionDirective, _ includeBody: Bool) -> [UInt8] {
        var bytes: [UInt8] = []
        ResponseEncoder.append(response, date: date, connection: connection, includeBody: includeBody, to: &bytes)
        return bytes
    }

    /// What the memo gives for a queue holding only this answer (nil when it declines).
    func sole(
        _ response: PreparedResponse,
        _ date: DateLine,
        _ connection: ConnectionDirective = .none,
        includeBody: Bool = true
    ) -> [UInt8]? {
        var queue = OutputQueue()
        queue.append(response, date: date, connection: connection, includeBody: includeBody)
        return queue.soleAnswer(keptIn: memo, unlessBodyOf: 8 * 1024).map { Array($0) }
    }

    @Test("Every change of what the bytes depend on — the response, the second, the Connection line, HEAD — gives that answer's bytes")
    func keyedByEverythingTheBytesDependOn() {
        let one = document(#"{"applinks":{"details":[]}}"#)
        // The same bytes in another object: still another key (an object, not its bytes, is what is kept).
        let twin = document(#"{"applinks":{"details":[]}}"#)
        let other = document(#"{"webcredentials":{"apps":["ABCDE12345.com.example.app"]}}"#)
        let now = DateLine(unixSeconds: 1_000_000)
        let later = DateLine(unixSeconds: 1_000_001)
        let answers: [(PreparedResponse, DateLine, ConnectionDirective, Bool)] = [
            (one, now, .none, true), (one, now, .none, true), (one, later, .none, true), (one, now, .none, true),
            (one, now, .close, true), (one, now, .keepAlive, true), (one, now, .none, false), (one, now, .none, true),
            (other, now, .none, true), (one, now, .none, true), (twin, now, .none, true), (other, later, .close, false),
            (one, now, .none, true),
        ]
        for (index, (response, date, connection, includeBody)) in answers.enumerated() {
            #expect(
                sole(response, date, connection, includeBody: includeBody) == encoded(response, date, connection, includeBody),
                "answer \(index)"
            )
        }
    }

    @Test("Sent again from the kept bytes: the same answer is not copied a second time")
    func keptBytesAreSentAgain() throws {
        let one = document(#"{"applinks":{"details":[]}}"#)
        let date = DateLine(unixSeconds: 1_000_000)
        var first = OutputQueue()
        first.append(one, date: date, connection: .none, includeBody: true)
        let answer = first.soleAnswer(keptIn: memo, unlessBodyOf: 8 * 1024)
        let written = try #require(answer)
        #expect(written.baseAddress == UnsafeRawPointer(memo.buffer.baseAddress))
        // Marked where no copy would: a second answer that is the same one comes back with the mark.
        memo.buffer[0] = UInt8(ascii: "X")
        var again = OutputQueue()
        again.append(one, date: date, connection: .none, includeBody: true)
        #expect(again.soleAnswer(keptIn: memo, unlessBodyOf: 8 * 1024)?.first == UInt8(ascii: "X"))
        // Forgotten, it is copied afresh.
        memo.forget()
        #expect(sole(one, date) == encoded(one, date, .none, true))
    }

    @Test("Declined, with the general path left to write it: two answers queued, one partly written, too large, a body sent from its file")
    func declined() {
        let one = document(#"{"applinks":{"details":[]}}"#)
        let date = DateLine(unixSeconds: 1_000_000)
        var two = OutputQueue()
        two.append(one, date: date, connection: .none, includeBody: true)
        two.append(one, date: date, connection: .none, includeBody: true)
        #expect(two.soleAnswer(keptIn: memo, unlessBodyOf: 8 * 1024) == nil)
        var partly = OutputQueue()
        partly.append(one, date: date, connection: .none, includeBody: true)
        partly.consume(1)
        #expect(partly.soleAnswer(keptIn: memo, unlessBodyOf: 8 * 1024) == nil)
        let large = document(String(repeating: "y", count: 5000))
        #expect(sole(large, date) == nil, "larger than the memo")
        let small = RenderedAnswer(capacity: 64 * 1024)
        var fromFile = OutputQueue()
        fromFile.append(large, date: date, connection: .none, includeBody: true)
        #expect(fromFile.soleAnswer(keptIn: small, unlessBodyOf: 4 * 1024) == nil, "a body its writer sends from a file")
        // Its HEAD is a few lines: kept.
        var head = OutputQueue()
        head.append(large, date: date, connection: .none, includeBody: false)
        #expect(head.soleAnswer(keptIn: small, unlessBodyOf: 4 * 1024).map { Array($0) } == encoded(large, date, .none, false))
    }

    @Test("The kept response is held until forgotten: no other answer can take its address and be sent its bytes")
    func heldUntilForgotten() {
        weak var kept: PreparedResponse?
        do {
            let response = document(#"{"applinks":{"details":[]}}"#)
            kept = response
            #expect(sole(response, DateLine(unixSeconds: 0)) != nil)
        }
        #expect(kept != nil, "the memo holds it")
        memo.forget()
        #expect(kept == nil, "forgotten, it is freed")
    }
}
