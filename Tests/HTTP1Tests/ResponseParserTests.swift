import Testing

@testable import HTTP1

@Suite("HTTP/1.1 response parser (check's client)")
struct ResponseParserTests {
    func parse(_ text: String, closed: Bool = true, head: Bool = false) -> ResponseParser.Outcome {
        ResponseParser.parse(Array(text.utf8), closed: closed, isHEAD: head)
    }

    @Test("Status line, headers as sent (repeats kept, names case-insensitive), Content-Length body")
    func basic() throws {
        guard
            case .complete(let response, let consumed) = parse(
                "HTTP/1.1 301 Moved Permanently\r\nLocation: /x\r\nSet-Cookie: a\r\nset-cookie: b\r\nContent-Length: 3\r\n\r\nabcEXTRA"
            )
        else {
            Issue.record("expected a complete response")
            return
        }
        #expect(response.status == 301)
        #expect(response.reason == "Moved Permanently")
        #expect(response.header("location") == "/x")
        #expect(response.headers("Set-Cookie") == ["a", "b"])
        #expect(response.body == Array("abc".utf8))
        #expect(response.framing == .contentLength(3))
        #expect(consumed == 100, "everything but the bytes after the body")
    }

    @Test("Chunked bodies are decoded, split anywhere; trailers skipped")
    func chunked() {
        let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nX-Trailer: y\r\n\r\n"
        guard case .complete(let response, _) = parse(text) else {
            Issue.record("expected complete")
            return
        }
        #expect(response.body == Array("Wikipedia".utf8))
        #expect(response.framing == .chunked)
        for cut in 1..<text.utf8.count {
            let outcome = ResponseParser.parse(Array(text.utf8.prefix(cut)), closed: false)
            #expect(outcome == .incomplete, "cut at \(cut)")
        }
        guard case .failed(let error) = parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n") else {
            Issue.record("a bad chunk size must fail")
            return
        }
        #expect(error.message.contains("invalid chunk size"))
        guard case .failed = parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab") else {
            Issue.record("a chunked body cut by the close must fail")
            return
        }
    }

    @Test("Close-delimited bodies end at the close; HEAD, 204 and 304 have none")
    func framing() {
        #expect(parse("HTTP/1.0 200 OK\r\n\r\nhello", closed: false) == .incomplete)
        guard case .complete(let response, _) = parse("HTTP/1.0 200 OK\r\n\r\nhello") else {
            Issue.record("expected complete")
            return
        }
        #expect(response.framing == .closeDelimited)
        #expect(response.body == Array("hello".utf8))
        guard case .complete(let head, _) = parse("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", closed: false, head: true) else {
            Issue.record("a HEAD answer is complete at its blank line")
            return
        }
        #expect(head.body.isEmpty)
        guard case .complete(let cut, _) = parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") else {
            Issue.record("a short body is reported, not failed")
            return
        }
        #expect(cut.receivedBodyBytes == 3)
        #expect(cut.framing == .contentLength(10))
    }

    @Test(
        "Malformed responses name the problem",
        arguments: [
            ("", "without answering"), ("HTTP/1.1 200 OK\r\nX", "cut off in its header"),
            ("SSH-2.0-OpenSSH\r\n\r\n", "malformed status line"),
            ("HTTP/1.1 2000 OK\r\n\r\n", "malformed status line"), ("HTTP/1.1 200 OK\r\nBad Header\r\n\r\n", "malformed header line"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "invalid Content-Length"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "does not end with chunked"),
        ]
    )
    func malformed(text: String, words: String) {
        guard case .failed(let error) = parse(text) else {
            Issue.record("\(text.debugDescription) must fail")
            return
        }
        #expect(error.message.contains(words), "\(error.message)")
    }
}
