import Testing

@testable import HTTP1

@Suite("Body discarding, PROXY protocol, dates")
struct BodyAndProxyTests {
    func discard(_ framing: BodyFraming, _ chunks: [String], limit: Int = 1000) -> BodyDiscarder.Result {
        var discarder = BodyDiscarder(framing, limit: limit)
        var result = BodyDiscarder.Result.needMore
        for chunk in chunks {
            result = Array(chunk.utf8).withUnsafeBufferPointer { discarder.consume($0, from: 0) }
            if case .needMore = result { continue }
            return result
        }
        return result
    }

    @Test("Content-Length bodies end exactly after their length, across reads")
    func lengthBody() {
        #expect(discard(.length(5), ["abcdeGET"]) == .done(5))
        #expect(discard(.length(5), ["ab", "cd", "eX"]) == .done(1))
        #expect(discard(.length(5), ["ab"]) == .needMore)
    }

    @Test("Chunked bodies: sizes, extensions, trailers, split anywhere")
    func chunked() {
        let body = "4\r\nWiki\r\n5;name=v\r\npedia\r\n0\r\nTrailer: x\r\n\r\nNEXT"
        let bytes = Array(body.utf8)
        for split in 0...bytes.count {
            var discarder = BodyDiscarder(.chunked, limit: 1000)
            let first = Array(bytes[0..<split]).withUnsafeBufferPointer { discarder.consume($0, from: 0) }
            if case .done(let end) = first {
                #expect(end == bytes.count - 4)
                continue
            }
            #expect(first == .needMore, "split \(split)")
            let second = Array(bytes[split...]).withUnsafeBufferPointer { discarder.consume($0, from: 0) }
            #expect(second == .done(bytes.count - 4 - split), "split \(split)")
        }
    }

    @Test(
        "Chunked framing errors close the connection; too much is 413",
        arguments: [
            ("4\nWiki\r\n0\r\n\r\n", "bare LF"),
            ("4\r\nWiki\n0\r\n\r\n", "longer than its size"),
            ("zz\r\n", "invalid chunk size"),
            ("fffffffffffffffff\r\n", "too large"),
            ("0\r\n\n", "bare LF in chunked trailer"),
        ]
    )
    func chunkedErrors(body: String, reason: String) {
        guard case .failed(let error) = discard(.chunked, [body]) else {
            Issue.record("expected failure for \(body.debugDescription)")
            return
        }
        #expect(error.detail.contains(reason), "\(error.detail)")
    }

    @Test("A chunked body larger than the limit is 413")
    func chunkedLimit() {
        #expect(discard(.chunked, ["400\r\n"], limit: 100) == .failed(.payloadTooLarge))
    }

    func proxy(_ bytes: [UInt8]) -> ProxyProtocol.Result { bytes.withUnsafeBufferPointer { ProxyProtocol.parse($0) } }

    @Test("PROXY v1: TCP4, TCP6 and UNKNOWN; incomplete until CRLF; garbage refused")
    func proxyV1() {
        let line = Array("PROXY TCP4 203.0.113.7 10.0.0.1 56324 443\r\nGET".utf8)
        #expect(proxy(line) == .complete(client: "203.0.113.7", length: line.count - 3))
        #expect(proxy(Array("PROXY TCP6 2001:db8::1 ::1 1 2\r\n".utf8)) == .complete(client: "2001:db8::1", length: 32))
        #expect(proxy(Array("PROXY UNKNOWN\r\n".utf8)) == .complete(client: nil, length: 15))
        #expect(proxy(Array("PROXY TCP4 203.0.113.7".utf8)) == .incomplete)
        #expect(proxy(Array("PRO".utf8)) == .incomplete)
        if case .failed = proxy(Array("GET / HTTP/1.1\r\n".utf8)) {} else { Issue.record("plain HTTP must be refused") }
        if case .failed = proxy(Array("PROXY TCP4 999.1.1.1 1.1.1.1 1 2\r\n".utf8)) {} else { Issue.record("bad address") }
        if case .failed = proxy(Array(("PROXY " + String(repeating: "x", count: 120)).utf8)) {} else { Issue.record("too long") }
    }

    @Test("PROXY v2: IPv4, IPv6, LOCAL; incomplete until the announced length")
    func proxyV2() {
        let signature = ProxyProtocol.v2Signature
        let v4 = signature + [0x21, 0x11, 0x00, 0x0C, 198, 51, 100, 9, 10, 0, 0, 1, 0xC3, 0x50, 0x01, 0xBB]
        #expect(proxy(v4 + Array("GET".utf8)) == .complete(client: "198.51.100.9", length: 28))
        #expect(proxy(Array(v4.prefix(20))) == .incomplete)
        var v6 = signature + [0x21, 0x21, 0x00, 0x24]
        v6 += [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1] + [UInt8](repeating: 0, count: 16) + [0, 1, 0, 2]
        #expect(proxy(v6) == .complete(client: "2001:db8:0:0:0:0:0:1", length: 52))
        let local = signature + [0x20, 0x00, 0x00, 0x00]
        #expect(proxy(local) == .complete(client: nil, length: 16))
    }

    @Test("IMF-fixdate formatting, including leap years and the epoch")
    func dates() {
        #expect(HTTPDate.format(unixSeconds: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(unixSeconds: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(unixSeconds: 951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
        // Parsing is the inverse (Retry-After), and refuses what is not an IMF-fixdate.
        for seconds in [0, 784_111_777, 951_782_400, 1_796_000_000] {
            #expect(HTTPDate.parse(HTTPDate.format(unixSeconds: seconds)) == seconds)
        }
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 UTC") == nil)
        #expect(HTTPDate.parse("120") == nil)
        #expect(HTTPDate.format(unixSeconds: 1_798_761_599) == "Thu, 31 Dec 2026 23:59:59 GMT")
    }

    @Test("A Date line held in place is the line's bytes for every second it can state; outside those, the nearest one")
    func dateLines() {
        var generator = SystemRandomNumberGenerator()
        let seconds =
            [0, 1, 59, 784_111_777, 951_782_400, 1_798_761_599, 253_402_300_799]
            + (0..<2_000).map { _ in Int.random(in: 0...253_402_300_799, using: &generator) }
        for second in seconds {
            #expect(DateLine(unixSeconds: second).bytes == HTTPDate.line(unixSeconds: second), "\(second)")
            #expect(DateLine(unixSeconds: second).bytes.count == DateLine.byteCount)
        }
        #expect(String(decoding: DateLine(unixSeconds: -5).bytes, as: UTF8.self) == "Date: Thu, 01 Jan 1970 00:00:00 GMT\r\n")
        #expect(String(decoding: DateLine(unixSeconds: 253_402_300_800).bytes, as: UTF8.self) == "Date: Fri, 31 Dec 9999 23:59:59 GMT\r\n")
        #expect(String(decoding: DateLine(unixSeconds: .max).bytes, as: UTF8.self) == "Date: Fri, 31 Dec 9999 23:59:59 GMT\r\n")
    }
}
