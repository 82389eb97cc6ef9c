import Support
import Testing

@testable import HTTP1

/// Parses `text` in one piece.
func parse(_ text: String, limits: HTTPLimits = HTTPLimits()) -> HeadParseResult {
    var parser = RequestHeadParser(limits: limits)
    return Array(text.utf8).withUnsafeBufferPointer { parser.parse($0) }
}

func head(_ text: String) throws -> (RequestHead, [UInt8]) {
    let bytes = Array(text.utf8)
    guard case .complete(let head) = parse(text) else {
        Issue.record("expected a complete head for \(text.debugDescription), got \(parse(text))")
        throw CancellationError()
    }
    return (head, bytes)
}

func text(_ bytes: [UInt8], _ range: Range<Int>?) -> String? {
    range.map { String(decoding: bytes[$0], as: UTF8.self) }
}

@Suite("HTTP/1.1 request head parser")
struct RequestParserTests {
    @Test("The token-byte map is RFC 9110's tchar set, every one of the 256 byte values")
    func tokenBytes() {
        for byte in 0...255 {
            #expect(isTokenByte(UInt8(byte)) == isTokenByteBySet(UInt8(byte)), "byte \(byte)")
        }
        #expect((0...255).filter { isTokenByte(UInt8($0)) }.count == 77, "62 letters and digits, 15 symbols")
    }

    @Test("The host-byte map is RFC 3986's reg-name set, every one of the 256 byte values, and Host is judged by it")
    func hostBytes() {
        let regName = Set(Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~%!$&'()*+;=".utf8))
        for byte in 0...255 {
            let value = UInt8(byte)
            #expect(isRegNameByte(value) == regName.contains(value), "byte \(byte)")
            // Inside a host name (not where a port or an IPv6 literal starts), exactly these bytes pass.
            guard value != UInt8(ascii: ":"), value != UInt8(ascii: "[") else { continue }
            let host: [UInt8] = [UInt8(ascii: "a"), value, UInt8(ascii: "b")]
            let verdict = host.withUnsafeBufferPointer { validateAuthority($0, 0..<3) }
            #expect((verdict == nil) == regName.contains(value), "byte \(byte)")
        }
    }

    @Test("Host bytes eight at a time: each of the 256 byte values at each place of a word, and in a long host name")
    func commonHostWords() {
        let common = Set(Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.".utf8))
        let regName = Set(Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~%!$&'()*+;=".utf8))
        let filler = Array("a0-.Zz9b".utf8)
        for byte in 0...255 {
            let value = UInt8(byte)
            for place in 0..<8 {
                var bytes = filler
                bytes[place] = value
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                let flags = commonHostBytes(word)
                for position in 0..<8 {
                    let expected = common.contains(bytes[position])
                    #expect((flags >> (8 * position + 7)) & 1 == (expected ? 1 : 0), "byte \(byte) at \(place), position \(position)")
                }
            }
            // Anywhere in a 21-byte name (words, then the byte loop), the verdict is the byte's.
            guard value != UInt8(ascii: ":"), value != UInt8(ascii: "[") else { continue }
            for place in 0..<21 {
                var host = Array("www.shop-42.example.c".utf8)
                host[place] = value
                let verdict = host.withUnsafeBufferPointer { validateAuthority($0, 0..<host.count) }
                #expect((verdict == nil) == regName.contains(value), "byte \(byte) at \(place)")
            }
        }
    }

    @Test("Header names are told apart a word at a time: every known name in any case, and no name one byte off")
    func knownHeaderNames() {
        let names: [(String, KnownHeader)] = [
            ("host", .host), ("content-length", .contentLength), ("transfer-encoding", .transferEncoding),
            ("aasa-server-check", .checkProbe), ("connection", .connection), ("accept-encoding", .acceptEncoding),
            ("x-forwarded-for", .forwardedFor), ("user-agent", .userAgent), ("origin", .origin), ("expect", .expect),
            ("content-type", .contentType), ("authorization", .authorization),
        ]
        let tokenBytes = (0...255).map(UInt8.init).filter(isTokenByte)
        var random = ParserFuzzTests.Generator(state: 5)
        for (name, known) in names {
            for variant in 0..<64 {
                // Each letter upper-cased or not, at random (the first variant as written).
                var bytes = Array(name.utf8).map { byte in
                    variant > 0 && random.next() % 2 == 0 && ASCII.isLetter(byte) ? byte & ~0x20 : byte
                }
                // What follows a name in a head: the colon and a value (the word reads stay inside the head).
                let line = bytes + Array(": x\r\n".utf8)
                #expect(line.withUnsafeBufferPointer { KnownHeader($0, 0..<bytes.count) } == known, "\(name) as written")
                // One byte changed to another token byte that is not its other case: no known name.
                let position = Int(random.next() % UInt64(bytes.count))
                let original = bytes[position]
                let replacement = tokenBytes[Int(random.next() % UInt64(tokenBytes.count))]
                let sameLetter = ASCII.isLetter(original) && ASCII.isLetter(replacement) && original | 0x20 == replacement | 0x20
                guard replacement != original, !sameLetter else { continue }
                bytes[position] = replacement
                let changed = bytes + Array(": x\r\n".utf8)
                #expect(
                    changed.withUnsafeBufferPointer { KnownHeader($0, 0..<bytes.count) } == .other,
                    "\(String(decoding: bytes, as: UTF8.self))"
                )
            }
        }
    }

    @Test("A simple GET: method, path, query split off, Host, keep-alive by default")
    func simpleGet() throws {
        let (head, bytes) = try head(
            "GET /.well-known/apple-app-site-association?x=1 HTTP/1.1\r\nHost: Example.com\r\nUser-Agent: AASA-Bot/1.0.0\r\n\r\n"
        )
        #expect(head.method == .get)
        #expect(text(bytes, head.pathRange) == "/.well-known/apple-app-site-association")
        #expect(text(bytes, head.targetRange) == "/.well-known/apple-app-site-association?x=1")
        #expect(text(bytes, head.hostRange) == "Example.com")
        #expect(text(bytes, head.userAgentRange) == "AASA-Bot/1.0.0")
        #expect(head.keepAlive)
        #expect(head.body == .none)
        #expect(head.length == bytes.count)
    }

    @Test("Every split of a request parses to the same head, scanning incrementally")
    func everySplit() throws {
        let request = Array("\r\nGET /a HTTP/1.1\r\nHost: a.com\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\nGET /b".utf8)
        let expectedLength = request.count - "GET /b".utf8.count
        for split in 0...request.count {
            var parser = RequestHeadParser()
            var result = Array(request[0..<split]).withUnsafeBufferPointer { parser.parse($0) }
            if case .complete = result {
                #expect(split >= expectedLength)
            } else {
                #expect(result == .incomplete, "split \(split)")
                result = request.withUnsafeBufferPointer { parser.parse($0) }
            }
            guard case .complete(let head) = result else {
                Issue.record("split \(split): \(result)")
                continue
            }
            #expect(head.length == expectedLength)
            #expect(head.acceptsGzip)
            #expect(!head.keepAlive)
            #expect(text(request, head.pathRange) == "/a")
        }
    }

    @Test("Byte-at-a-time delivery completes exactly at the final CRLF")
    func byteAtATime() {
        let request = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        var parser = RequestHeadParser()
        for end in 1...request.count {
            let result = Array(request[0..<end]).withUnsafeBufferPointer { parser.parse($0) }
            if end < request.count {
                #expect(result == .incomplete)
            } else if case .complete = result {
            } else {
                Issue.record("\(result)")
            }
        }
    }

    @Test(
        "Malformed requests get the right status",
        arguments: [
            ("GET / HTTP/1.1\r\n\r\n", 400, "missing Host"),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400, "more than one Host"),
            ("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "invalid character in Host"),
            ("GET / HTTP/1.1\r\nHost: user@a.com\r\n\r\n", 400, "userinfo"),
            ("GET / HTTP/1.1\r\nHost: a.com:8x\r\n\r\n", 400, "non-numeric port"),
            ("GET / HTTP/1.1\r\nHost: a.com,b.com\r\n\r\n", 400, "list of hosts"),
            ("GET / HTTP/1.1\r\nHost: \u{E9}.com\r\n\r\n", 400, "non-ASCII"),
            ("GET / HTTP/1.1\r\nHost:\r\n\r\n", 400, "empty Host"),
            ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400, "whitespace between a header name and the colon"),
            ("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n  folded\r\n\r\n", 400, "obsolete line folding"),
            ("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\u{0}c\r\n\r\n", 400, "control character"),
            ("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\rc\r\n\r\n", 400, "bare CR"),
            ("GET / HTTP/1.1\r\nHost: a\r\nX(A): b\r\n\r\n", 400, "invalid header field name"),
            ("GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", 400, "invalid header field name"),
            ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both Content-Length"),
            ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, "conflicting"),
            ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400, "invalid Content-Length"),
            ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", 400, "invalid Content-Length"),
            ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n", 400, "invalid Content-Length"),
            ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400, "invalid Content-Length"),
            ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", 400, "invalid Content-Length"),
            ("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400, "not the final"),
            ("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400, "twice"),
            ("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "unsupported transfer coding"),
            ("GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "HTTP/1.0"),
            ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505, "version"),
            ("GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505, "version"),
            ("GET / HTTP/1.1x\r\nHost: a\r\n\r\n", 400, "malformed HTTP version"),
            ("GET /  HTTP/1.1\r\nHost: a\r\n\r\n", 400, "malformed"),
            ("GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400, "malformed"),
            ("GET /\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n", 400, "non-ASCII"),
            ("GET\r\n\r\n", 400, "malformed request line"),
            ("GET example.com HTTP/1.1\r\nHost: a\r\n\r\n", 400, "request target"),
            ("\r\rGET / HTTP/1.1\r\nHost: a\r\n\r\n", 400, "bare CR"),
            ("GET /a#frag HTTP/1.1\r\nHost: a\r\n\r\n", 400, "fragment"),
            ("GET http://a.com/#x HTTP/1.1\r\nHost: a\r\n\r\n", 400, "fragment"),
            ("GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400, "only valid with OPTIONS"),
            ("HEAD * HTTP/1.1\r\nHost: a\r\n\r\n", 400, "only valid with OPTIONS"),
        ]
    )
    func malformed(request: String, status: Int, reason: String) {
        guard case .failed(let error) = parse(request) else {
            Issue.record("expected \(status) for \(request.debugDescription), got \(parse(request))")
            return
        }
        #expect(error.status == status, "\(request.debugDescription)")
        #expect(error.detail.contains(reason), "\(error.detail)")
    }

    @Test("Limits: a long request line is 414; a large or crowded header section is 431")
    func limits() {
        let limits = HTTPLimits(requestLineBytes: 100, headerBytes: 200, headerCount: 5, bodyBytes: 10)
        let longLine = "GET /" + String(repeating: "a", count: 200) + " HTTP/1.1\r\nHost: a\r\n\r\n"
        #expect(parse(longLine, limits: limits) == .failed(.uriTooLong))
        // Detected before the line ends (a client cannot make us buffer without bound).
        #expect(parse("GET /" + String(repeating: "a", count: 200), limits: limits) == .failed(.uriTooLong))
        let bigHeader = "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "b", count: 300)
        guard case .failed(let error) = parse(bigHeader, limits: limits) else {
            Issue.record("expected 431")
            return
        }
        #expect(error.status == 431)
        // The same, when the whole oversized head arrives at once.
        guard case .failed(let completeError) = parse(bigHeader + "\r\n\r\n", limits: limits), completeError.status == 431 else {
            Issue.record("expected 431 for a complete oversized head")
            return
        }
        let crowded = "GET / HTTP/1.1\r\nHost: a\r\n" + (0..<6).map { "X-\($0): 1\r\n" }.joined() + "\r\n"
        guard case .failed(let countError) = parse(crowded, limits: limits) else {
            Issue.record("expected 431")
            return
        }
        #expect(countError.status == 431)
        let exactlyFive = "GET / HTTP/1.1\r\nHost: a\r\n" + (0..<4).map { "X-\($0): 1\r\n" }.joined() + "\r\n"
        if case .complete = parse(exactlyFive, limits: limits) {} else { Issue.record("five fields are allowed") }
    }

    @Test("Absolute-form targets override Host (RFC 9112 §3.2.2)")
    func absoluteForm() throws {
        let (head, bytes) = try head("GET HTTP://Other.example:8443/apple-app-site-association?q HTTP/1.1\r\nHost: a.com\r\n\r\n")
        #expect(text(bytes, head.hostRange) == "Other.example:8443")
        #expect(text(bytes, head.pathRange) == "/apple-app-site-association")
        #expect(parse("GET http://a@b/ HTTP/1.1\r\nHost: a\r\n\r\n") == .failed(.badRequest("userinfo ('@') in Host")))
    }

    @Test("HTTP/1.0: no Host needed, closes unless Connection: keep-alive")
    func http10() throws {
        let (plain, _) = try head("GET / HTTP/1.0\r\n\r\n")
        #expect(plain.hostRange == nil)
        #expect(!plain.keepAlive)
        let (kept, _) = try head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
        #expect(kept.keepAlive)
        let (closed, _) = try head("GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade, close\r\n\r\n")
        #expect(!closed.keepAlive)
        let (future, _) = try head("GET / HTTP/1.9\r\nHost: a\r\n\r\n")
        #expect(future.keepAlive, "HTTP/1.x with x > 1 is treated as 1.1")
    }

    @Test("Methods are case-sensitive: get is unknown (501 territory)")
    func methods() throws {
        #expect(try head("get / HTTP/1.1\r\nHost: a\r\n\r\n").0.method == .unknown)
        #expect(try head("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n").0.method == .head)
        #expect(try head("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n").0.body == .length(3))
        #expect(try head("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n").0.isAsteriskForm)
    }

    @Test(
        "Accept-Encoding: gzip with q-values, x-gzip, wildcard, explicit refusal",
        arguments: [
            ("gzip", true), ("deflate, gzip;q=0.5", true), ("gzip;q=0", false), ("gzip; q=0.000", false), ("*", true),
            ("*;q=0", false), ("br", false), ("x-gzip", true), ("*, gzip;q=0", false), ("GZIP", true), ("identity", false),
        ]
    )
    func acceptEncoding(value: String, accepted: Bool) throws {
        #expect(try head("GET / HTTP/1.1\r\nHost: a\r\nAccept-Encoding: \(value)\r\n\r\n").0.acceptsGzip == accepted)
    }

    @Test("Bare LF line ends are accepted in the head; identical duplicate Content-Length is collapsed")
    func lenientWhereSafe() throws {
        let (head, _) = try head("GET / HTTP/1.1\nHost: a\nContent-Length: 2\nContent-Length: 2\n\n")
        #expect(head.body == .length(2))
    }

    @Test("Header field values keep interior whitespace and lose surrounding OWS (SP or HTAB)")
    func fieldValues() throws {
        let (head, bytes) = try head("GET / HTTP/1.1\r\nHost:\t a.com \t\r\nUser-Agent:  x  y \r\n\r\n")
        #expect(text(bytes, head.hostRange) == "a.com")
        #expect(text(bytes, head.userAgentRange) == "x  y")
    }
}

@Suite("HTTP/1.1 parser robustness")
struct ParserFuzzTests {
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test("20,000 mutated requests: never a crash, ranges always inside the buffer, heads end on a line end")
    func mutations() {
        let seeds = [
            "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nAccept-Encoding: gzip\r\n\r\n",
            "GET http://a.com/x?y HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\nabc",
            "HEAD / HTTP/1.1\r\nHost: [::1]:80\r\nTransfer-Encoding: chunked\r\nUser-Agent: AASA-Bot/1.0.0\r\n\r\n0\r\n\r\n",
        ].map { Array($0.utf8) }
        let interesting: [UInt8] = [0, 9, 10, 13, 32, 58, 44, 64, 0x7F, 0x80, 0xFF, UInt8(ascii: "["), UInt8(ascii: "]")]
        let limits = HTTPLimits(requestLineBytes: 64, headerBytes: 128, headerCount: 4, bodyBytes: 16)
        // Unmutated, every seed parses: a parser that refused everything would fail here, not pass below.
        for seed in seeds {
            var parser = RequestHeadParser(limits: limits)
            guard case .complete = seed.withUnsafeBufferPointer({ parser.parse($0) }) else {
                Issue.record("seed does not parse: \(String(decoding: seed, as: UTF8.self))")
                continue
            }
        }
        var random = Generator(state: 7)
        var completed = 0
        var failed = 0
        for iteration in 0..<20_000 {
            var bytes = seeds[iteration % seeds.count]
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let position = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[position] = interesting[Int(random.next() % UInt64(interesting.count))]
                case 1: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
                case 2: if bytes.count > 1 { bytes.remove(at: position) }
                default: bytes[position] = UInt8(truncatingIfNeeded: random.next())
                }
            }
            var parser = RequestHeadParser(limits: limits)
            let split = Int(random.next() % UInt64(bytes.count + 1))
            var result = Array(bytes[0..<split]).withUnsafeBufferPointer { parser.parse($0) }
            if result == .incomplete { result = bytes.withUnsafeBufferPointer { parser.parse($0) } }
            // However the bytes arrive, a head that parses is the head the whole buffer gives.
            var whole = RequestHeadParser(limits: limits)
            let expected = bytes.withUnsafeBufferPointer { whole.parse($0) }
            if case .complete(let a) = expected, case .complete(let b) = result { #expect(a == b) }
            if case .failed = result { failed += 1 }
            guard case .complete(let head) = result else { continue }
            completed += 1
            #expect(head.length <= bytes.count)
            #expect(bytes[head.length - 1] == 0x0A)
            for range in [head.pathRange, head.targetRange, head.methodRange] + [head.hostRange, head.userAgentRange].compactMap({ $0 }) {
                #expect(range.upperBound <= head.length)
            }
        }
        // Mutations leave many requests valid and break many: both outcomes must really occur, or the
        // loop above checked nothing.
        #expect(completed > 2_000, "only \(completed) of 20,000 mutated requests parsed")
        #expect(failed > 2_000, "only \(failed) of 20,000 mutated requests were refused")
    }
}

@Suite("A head parsed in one pass")
struct WholeHeadTests {
    /// The one-pass parse of a head that arrived whole must give exactly what the incremental scan gives,
    /// and leave to it every head it is not sure of (each refusal keeps the scan's wording and order).
    @Test("20,000 mutated requests: the one-pass parse gives the incremental scan's head, or leaves the request to it")
    func agreesWithTheScan() {
        let seeds = [
            "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nAccept-Encoding: gzip\r\n\r\n",
            "GET http://a.com/x?y HTTP/1.0\r\nConnection: keep-alive, close\r\nContent-Length: 3\r\n\r\nabc",
            "HEAD / HTTP/1.1\r\nHost: [::1]:80\r\nTransfer-Encoding: chunked\r\nUser-Agent: AASA-Bot/1.0.0\r\n\r\n0\r\n\r\n",
            "OPTIONS * HTTP/1.1\nHost: a\nExpect: 100-continue\nX-Forwarded-For: 192.0.2.1\n\n",
            "GET /p/42?utm_source=mail HTTP/1.1\r\nHost: go.example.com\r\nUser-Agent: Mozilla/5.0 (Macintosh)\t x \r\n"
                + "Origin: https://a.example\r\nAASA-Server-Check: 1\r\n\n",
            // Empty lines before the request line: only the scan skips them.
            "\r\n\nGET /a HTTP/1.1\r\nHost: a.example:8443\r\n\r\n",
        ].map { Array($0.utf8) }
        let interesting: [UInt8] = [0, 9, 10, 13, 32, 58, 44, 63, 35, 64, 0x7F, 0x80, 0xFF, UInt8(ascii: "["), UInt8(ascii: "]")]
        var random = ParserFuzzTests.Generator(state: 11)
        var onePass = 0
        var leftToTheScan = 0
        for iteration in 0..<20_000 {
            var bytes = seeds[iteration % seeds.count]
            // A fifth unmutated but cut short, and some under limits that refuse them: both ways must agree there too.
            let limits =
                iteration % 7 == 0
                ? HTTPLimits(requestLineBytes: 40, headerBytes: 1_000, headerCount: 2, bodyBytes: 16)
                : iteration % 7 == 1 ? HTTPLimits(requestLineBytes: 1_000, headerBytes: 60, headerCount: 50, bodyBytes: 16) : HTTPLimits()
            if iteration % 5 == 0 {
                bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1))))
            } else {
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    let position = Int(random.next() % UInt64(bytes.count))
                    switch random.next() % 4 {
                    case 0: bytes[position] = interesting[Int(random.next() % UInt64(interesting.count))]
                    case 1: bytes.insert(interesting[Int(random.next() % UInt64(interesting.count))], at: position)
                    case 2: if bytes.count > 1 { bytes.remove(at: position) }
                    default: bytes[position] = UInt8(truncatingIfNeeded: random.next())
                    }
                }
            }
            var parser = RequestHeadParser(limits: limits)
            var scanner = RequestHeadParser(limits: limits)
            var whole = RequestHead()
            var scannedHead = RequestHead()
            let (isWhole, result, scanned) = bytes.withUnsafeBufferPointer { buffer in
                (
                    parser.parseWhole(buffer, into: &whole), parser.parse(buffer),
                    scanner.parseIncrementally(buffer, into: &scannedHead)
                )
            }
            let scannedResult: HeadParseResult =
                switch scanned {
                case .incomplete: .incomplete
                case .complete: .complete(scannedHead)
                case .failed(let error): .failed(error)
                }
            #expect(result == scannedResult, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
            if isWhole {
                onePass += 1
                #expect(scannedResult == .complete(whole))
            } else if scanned == .complete {
                leftToTheScan += 1
            }
        }
        // Both ways must really be taken, or the comparison above checked nothing.
        #expect(onePass > 2_000, "only \(onePass) heads parsed in one pass")
        #expect(leftToTheScan > 150, "only \(leftToTheScan) complete heads left to the scan")
    }
}

@Suite("Bytes that cannot start a request")
struct NotHTTPTests {
    /// Found by the fuzzer (FuzzRequestHead): a CR that ended one read was skipped, so "\r" then "\r"
    /// waited for more instead of failing like "\r\r" in one read.
    @Test(
        "A CR before the request line is judged with the byte after it, however the bytes are split",
        arguments: ["\r\r", "\n\n\rb\n", "\r\rGET / HTTP/1.1\r\n\r\n"]
    )
    func crAtBoundary(text: String) {
        let bytes = Array(text.utf8)
        var whole = RequestHeadParser()
        let expected = bytes.withUnsafeBufferPointer { whole.parse($0) }
        #expect(expected != .incomplete)
        for split in 1..<bytes.count {
            var parser = RequestHeadParser()
            var result = bytes[0..<split].withUnsafeBufferPointer { parser.parse($0) }
            if result == .incomplete { result = bytes.withUnsafeBufferPointer { parser.parse($0) } }
            #expect(result == expected, "split at \(split)")
        }
    }

    @Test("A TLS ClientHello is refused at its first byte, naming the likely mistake")
    func clientHello() {
        var parser = RequestHeadParser()
        let result = [UInt8]([0x16]).withUnsafeBufferPointer { parser.parse($0) }
        guard case .failed(let error) = result else {
            Issue.record("expected 400 at the first byte, got \(result)")
            return
        }
        #expect(error.status == 400)
        #expect(error.detail.contains("TLS handshake on a plain-HTTP port"))
    }

    @Test("Any byte that cannot be in a method ends the request at once; a method arriving byte by byte is fine")
    func methodBytes() {
        for bad: [UInt8] in [
            [0x00], [0x80], [UInt8(ascii: "G"), UInt8(ascii: "E"), 0x01], [UInt8(ascii: "{")], [UInt8(ascii: "G"), UInt8(ascii: "(")],
        ] {
            var parser = RequestHeadParser()
            let result = bad.withUnsafeBufferPointer { parser.parse($0) }
            guard case .failed(let error) = result else {
                Issue.record("expected a failure for \(bad), got \(result)")
                continue
            }
            #expect(error.status == 400)
        }
        var parser = RequestHeadParser()
        let request = Array("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        var result = HeadParseResult.incomplete
        for end in 1...request.count {
            result = request[0..<end].withUnsafeBufferPointer { parser.parse($0) }
            if end < request.count { #expect(result == .incomplete, "at \(end)") }
        }
        guard case .complete(let head) = result else {
            Issue.record("OPTIONS * must parse, got \(result)")
            return
        }
        #expect(head.isAsteriskForm)
        #expect(head.method == .options)
    }
}

@Suite("Response framing")
struct ResponseEncoderTests {
    @Test("Status line with the registered reason, Date, Connection, the prepared headers, Content-Length, blank line, body")
    func framing() {
        let response = PreparedResponse(status: 422, headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        var output: [UInt8] = []
        let date = DateLine(unixSeconds: 0)
        let count = ResponseEncoder.append(response, date: date, connection: .close, includeBody: true, to: &output)
        #expect(count == output.count)
        #expect(
            String(decoding: output, as: UTF8.self)
                == "HTTP/1.1 422 Unprocessable Content\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nConnection: close\r\n"
                + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        )
        var head: [UInt8] = []
        ResponseEncoder.append(response, date: date, connection: .keepAlive, includeBody: false, to: &head)
        #expect(String(decoding: head, as: UTF8.self).hasSuffix("Content-Length: 2\r\n\r\n"), "HEAD: same headers, no body")
        #expect(String(decoding: head, as: UTF8.self).contains("Connection: keep-alive\r\n"))
    }

    @Test("The output queue writes exactly what the encoder would, however the writes are split; prepared bytes go by pointer")
    func outputQueue() {
        let big = PreparedResponse(
            status: 200,
            headers: [("Content-Type", "application/json")],
            body: Array(repeating: UInt8(ascii: "x"), count: 5000)
        )
        let small = PreparedResponse(status: 404, headers: [], body: Array("{}".utf8))
        // A document's response: status line and common lines shared, its own ETag and Content-Length.
        let owner = Owner(#"{"applinks":{}}"#)
        let shared = SharedHeaders(status: 200, headers: [("Server", "aasa-server"), ("Content-Type", "application/json")])
        let document = PreparedResponse(shared: shared, etag: 0xABC, body: UnsafeRawBufferPointer(owner.buffer), owner: owner)
        #expect(String(decoding: Array(document.statusLine), as: UTF8.self) == "HTTP/1.1 200 OK\r\n")
        #expect(String(decoding: Array(document.fields), as: UTF8.self) == "ETag: \"0000000000000abc\"\r\nContent-Length: 15\r\n\r\n")
        let date = DateLine(unixSeconds: 86_400)
        var expected: [UInt8] = []
        ResponseEncoder.append(big, date: date, connection: .none, includeBody: true, to: &expected)
        ResponseEncoder.append(small, date: date, connection: .close, includeBody: false, to: &expected)
        ResponseEncoder.append(document, date: date, connection: .none, includeBody: true, to: &expected)
        ResponseEncoder.append(big, date: date, connection: .keepAlive, includeBody: true, to: &expected)
        for split in [1, 7, 100, 4096, 20000] {
            var queue = OutputQueue()
            queue.append(big, date: date, connection: .none, includeBody: true)
            queue.append(small, date: date, connection: .close, includeBody: false)
            queue.append(document, date: date, connection: .none, includeBody: true)
            queue.append(big, date: date, connection: .keepAlive, includeBody: true)
            #expect(queue.byteCount == expected.count)
            var written: [UInt8] = []
            while !queue.isEmpty {
                var buffer = [UInt8](repeating: 0, count: split)
                let count = buffer.withUnsafeMutableBytes { queue.gather(into: $0) }
                written += buffer[0..<count]
                queue.consume(count)
            }
            #expect(written == expected, "split \(split)")
            #expect(queue.byteCount == 0)
        }
        var queue = OutputQueue()
        queue.append(big, date: date, connection: .none, includeBody: true)
        var stablePieces = 0
        var bodyPieces = 0
        queue.forEachPiece { piece, stable, bodyOf in
            if stable { stablePieces += 1 }
            // Only the body comes with its response (a writer may send it from a file the response owns).
            if let bodyOf {
                bodyPieces += 1
                #expect(bodyOf.takeUnretainedValue() === big && piece.baseAddress == big.bodyBytes.baseAddress)
            }
            #expect(
                !stable || piece.baseAddress == big.statusLine.baseAddress || piece.baseAddress == big.fields.baseAddress
                    || piece.baseAddress == big.bodyBytes.baseAddress
            )
            return true
        }
        #expect(stablePieces == 3)
        #expect(bodyPieces == 1)
        // The Connection line is the program's constant: stable; the Date line is the queue's: copied.
        var closing = OutputQueue()
        closing.append(small, date: date, connection: .close, includeBody: true)
        var pieces: [(String, Bool)] = []
        var bodyMarks: [Bool] = []
        closing.forEachPiece { piece, stable, bodyOf in
            pieces.append((String(decoding: piece, as: UTF8.self), stable))
            bodyMarks.append(bodyOf != nil)
            return true
        }
        #expect(
            pieces.map(\.0) == [
                "HTTP/1.1 404 Not Found\r\n", String(decoding: date.bytes, as: UTF8.self), "Connection: close\r\n",
                "Content-Length: 2\r\n\r\n", "{}",
            ]
        )
        #expect(pieces.map(\.1) == [true, false, true, true, true])
        #expect(bodyMarks == [false, false, false, false, true])
    }

    @Test(
        "Copying the whole queue at once gives exactly the unwritten bytes, from any point a write stopped at; never with a large body to go"
    )
    func copyAll() {
        let small = PreparedResponse(status: 404, headers: [], body: Array("{}".utf8))
        let owner = Owner(#"{"applinks":{"details":[]}}"#)
        let shared = SharedHeaders(status: 200, headers: [("Content-Type", "application/json")])
        let document = PreparedResponse(shared: shared, etag: 0x1F, body: UnsafeRawBufferPointer(owner.buffer), owner: owner)
        let large = PreparedResponse(status: 200, headers: [], body: Array(repeating: UInt8(ascii: "y"), count: 9000))
        let date = DateLine(unixSeconds: 1_000_000)
        var expected: [UInt8] = []
        ResponseEncoder.append(document, date: date, connection: .none, includeBody: true, to: &expected)
        ResponseEncoder.append(small, date: date, connection: .close, includeBody: false, to: &expected)
        ResponseEncoder.append(document, date: date, connection: .keepAlive, includeBody: true, to: &expected)
        ResponseEncoder.append(small, date: date, connection: .none, includeBody: true, to: &expected)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
        defer { buffer.deallocate() }
        // Every point a write could have stopped at, including inside the Date line (copied, not by pointer).
        for written in 0...expected.count {
            var queue = OutputQueue()
            queue.append(document, date: date, connection: .none, includeBody: true)
            queue.append(small, date: date, connection: .close, includeBody: false)
            queue.append(document, date: date, connection: .keepAlive, includeBody: true)
            queue.append(small, date: date, connection: .none, includeBody: true)
            queue.consume(written)
            let count = queue.copyAll(into: buffer, unlessBodyOf: 8 * 1024)
            #expect(count == expected.count - written)
            #expect(Array(buffer[0..<(count ?? 0)]) == Array(expected[written...]), "written \(written)")
        }
        // A large body is left to its writer (a file), whether it is first, later, or partly written.
        var queue = OutputQueue()
        queue.append(small, date: date, connection: .none, includeBody: true)
        queue.append(large, date: date, connection: .none, includeBody: true)
        let roomy = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 8)
        defer { roomy.deallocate() }
        #expect(queue.copyAll(into: roomy, unlessBodyOf: 8 * 1024) == nil)
        let pending = queue.byteCount
        queue.consume(pending - 100)
        #expect(queue.copyAll(into: buffer, unlessBodyOf: 8 * 1024) == nil, "the last 100 bytes of a large body")
        // Its head alone (a HEAD request) is a few lines: copied.
        var head = OutputQueue()
        head.append(large, date: date, connection: .none, includeBody: false)
        #expect(head.copyAll(into: buffer, unlessBodyOf: 8 * 1024) == head.byteCount)
    }

    /// Owns a buffer, as the loaded config owns a site's document.
    final class Owner: @unchecked Sendable {
        let buffer: UnsafeMutableRawBufferPointer
        init(_ text: String) {
            buffer = .allocate(byteCount: text.utf8.count, alignment: 1)
            buffer.copyBytes(from: Array(text.utf8))
        }
        deinit { buffer.deallocate() }
    }

    @Test("A body another object owns is sent from where it is, never copied, and framed like an owned one")
    func borrowedBody() {
        let owner = Owner(#"{"applinks":{}}"#)
        let borrowed = PreparedResponse(status: 200, headers: [("ETag", "\"1\"")], body: UnsafeRawBufferPointer(owner.buffer), owner: owner)
        let owned = PreparedResponse(status: 200, headers: [("ETag", "\"1\"")], body: Array(#"{"applinks":{}}"#.utf8))
        #expect(borrowed.bodyBytes.baseAddress == UnsafeRawPointer(owner.buffer.baseAddress))
        let date = DateLine(unixSeconds: 0)
        var one: [UInt8] = []
        var other: [UInt8] = []
        ResponseEncoder.append(borrowed, date: date, connection: .none, includeBody: true, to: &one)
        ResponseEncoder.append(owned, date: date, connection: .none, includeBody: true, to: &other)
        #expect(one == other)
        #expect(String(decoding: one, as: UTF8.self).hasSuffix("Content-Length: 15\r\n\r\n{\"applinks\":{}}"))
        var queue = OutputQueue()
        queue.append(borrowed, date: date, connection: .none, includeBody: false)
        var written: [UInt8] = []
        queue.forEachPiece { piece, _, bodyOf in
            #expect(bodyOf == nil, "HEAD: no body piece")
            written += piece
            return true
        }
        #expect(written == Array(one[0..<(one.count - 15)]), "HEAD: every header, no body")
    }

    @Test("A document's ETag written as digits is the ETag line the header list writes, with any suffix and extra lines")
    func etagLine() {
        let owner = Owner(String(repeating: "x", count: 1_234))
        let body = UnsafeRawBufferPointer(owner.buffer)
        let shared = SharedHeaders(status: 200, headers: [("Content-Type", "application/json")])
        let date = DateLine(unixSeconds: 0)
        for (tag, suffix, extra) in [(UInt64(0x0123_4567_89AB_CDEF), "", [(String, String)]()), (0, "-gz", [("Content-Encoding", "gzip")])]
        {
            let written = PreparedResponse(
                shared: shared,
                etag: tag,
                etagSuffix: suffix == "" ? "" : "-gz",
                headers: extra,
                body: body,
                owner: owner
            )
            let hex = String(tag, radix: 16)
            let listed = PreparedResponse(
                shared: shared,
                headers: [("ETag", "\"" + String(repeating: "0", count: 16 - hex.count) + hex + suffix + "\"")] + extra,
                body: body,
                owner: owner
            )
            var one: [UInt8] = []
            var other: [UInt8] = []
            ResponseEncoder.append(written, date: date, connection: .none, includeBody: true, to: &one)
            ResponseEncoder.append(listed, date: date, connection: .none, includeBody: true, to: &other)
            #expect(one == other)
            #expect(
                String(decoding: written.head, as: UTF8.self).contains(
                    "ETag: \"\(String(repeating: "0", count: 16 - hex.count) + hex)\(suffix)\"\r\n"
                )
            )
            #expect(String(decoding: one, as: UTF8.self).contains("Content-Length: 1234\r\n\r\nxxx"))
        }
    }

    @Test("Every status the server sends has its registered reason phrase")
    func reasons() {
        for (status, phrase) in [
            (200, "OK"), (400, "Bad Request"), (403, "Forbidden"), (404, "Not Found"), (405, "Method Not Allowed"),
            (408, "Request Timeout"), (413, "Content Too Large"), (414, "URI Too Long"), (422, "Unprocessable Content"),
            (431, "Request Header Fields Too Large"), (501, "Not Implemented"), (503, "Service Unavailable"),
            (505, "HTTP Version Not Supported"), (401, "Unauthorized"),
        ] {
            #expect(HTTPStatus.reasonPhrase(status) == phrase)
            #expect(HTTPStatus.isRegistered(status))
        }
        #expect(HTTPStatus.reasonPhrase(499) == "Client Error", "never a placeholder")
    }
}

@Suite("Header lines read eight bytes at a time")
struct FieldLineScanTests {
    @Test(
        "A line's end, its first forbidden byte and its value's hash agree with a byte loop at every offset and alignment, HTAB and obs-text allowed: 20,000 random lines"
    )
    func agreesWithByteLoop() {
        var generator = SystemRandomNumberGenerator()
        let interesting: [UInt8] = [0x00, 0x01, 0x09, 0x0A, 0x0D, 0x1F, 0x20, 0x21, 0x7E, 0x7F, 0x80, 0x9F, 0xFF, 0x41, 0x61]
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...40, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) }
            for _ in 0..<Int.random(in: 0...2, using: &generator) where !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = interesting.randomElement(using: &generator)!
            }
            bytes += Bool.random(using: &generator) ? [0x0D, 0x0A] : [0x0A]
            bytes += (0..<Int.random(in: 0...9, using: &generator)).map { _ in UInt8.random(in: 0...0xFF, using: &generator) }
            let start = Int.random(in: 0...min(3, length), using: &generator)
            let stop = bytes.indices.dropFirst(start).first { (bytes[$0] < 0x20 && bytes[$0] != 0x09) || bytes[$0] == 0x7F }!
            let endsLine = bytes[stop] == 0x0A || (bytes[stop] == 0x0D && stop + 1 < bytes.count && bytes[stop + 1] == 0x0A)
            let line = bytes.withUnsafeBufferPointer { scanFieldLine($0, valueStart: start, end: bytes.count, hashing: true) }
            let value = Array(bytes[start..<stop])
            let expectedHash = value.contains(0x09) || !endsLine ? nil : value.withUnsafeBytes { FieldValueHash.of($0) }
            #expect(line.forbidden == (endsLine ? nil : stop), "\(bytes) from \(start)")
            #expect(line.contentEnd == stop, "\(bytes) from \(start)")
            if endsLine { #expect(line.next == stop + (bytes[stop] == 0x0D ? 2 : 1), "\(bytes) from \(start)") }
            #expect(line.hash == expectedHash, "\(bytes) from \(start)")
            if line.forbidden != (endsLine ? nil : stop) || line.contentEnd != stop || line.hash != expectedHash { return }
        }
    }

    @Test("The User-Agent's hash is the hash of its bytes as the head holds them, trailing whitespace and tabs included or not")
    func userAgentHash() throws {
        for agent in [
            "AASA-Bot/1.0.0", "a", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X)", "x\ty z", "exactly8", "sixteen bytes!!!",
        ] {
            for trailing in ["", " ", "\t ", "  "] {
                let bytes = Array("GET / HTTP/1.1\r\nUser-Agent: \(agent)\(trailing)\r\nHost: a.example\r\n\r\n".utf8)
                var parser = RequestHeadParser()
                guard case .complete(let head) = bytes.withUnsafeBufferPointer({ parser.parse($0) }) else {
                    Issue.record("not parsed: \(agent)")
                    return
                }
                let range = try #require(head.userAgentRange)
                #expect(String(decoding: bytes[range], as: UTF8.self) == agent)
                #expect(head.userAgentHash == Array(agent.utf8).withUnsafeBytes { FieldValueHash.of($0) }, "\(agent)\(trailing)")
            }
        }
        var parser = RequestHeadParser()
        let bytes = Array("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n".utf8)
        guard case .complete(let head) = bytes.withUnsafeBufferPointer({ parser.parse($0) }) else { return }
        #expect(head.userAgentHash == nil)
    }
}

@Suite("Request targets read eight bytes at a time")
struct TargetScanTests {
    /// The byte loop the parser had: where the target ends, the first '?', or the error for its first bad byte.
    func byteLoop(_ target: [UInt8]) -> (end: Int, question: Int?, error: HTTPError?) {
        var question: Int?
        for (index, byte) in target.enumerated() {
            if byte == 0x20 { return (index, question, nil) }
            if byte < 0x20 || byte >= 0x7F {
                return (
                    index, question,
                    .badRequest(byte >= 0x80 ? "non-ASCII byte in the request target" : "control character in the request target")
                )
            }
            if byte == UInt8(ascii: "#") { return (index, question, .badRequest("a fragment ('#') in the request target")) }
            if byte == UInt8(ascii: "?") && question == nil { question = index }
        }
        return (target.count, question, nil)
    }

    @Test(
        "Every byte at every offset and alignment: the target, the path and the first bad byte's error agree with a byte loop (20,000 random targets)"
    )
    func agreesWithByteLoop() {
        var generator = SystemRandomNumberGenerator()
        let interesting: [UInt8] = [0x00, 0x09, 0x0D, 0x1F, 0x20, 0x21, 0x23, 0x3F, 0x7E, 0x7F, 0x80, 0xC3, 0xFE, 0xFF, 0x2F, 0x61]
        for _ in 0..<20_000 {
            var target =
                [UInt8(ascii: "/")]
                + (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0x21...0x7E, using: &generator) }
            for _ in 0..<Int.random(in: 0...2, using: &generator) where target.count > 1 {
                target[Int.random(in: 1..<target.count, using: &generator)] = interesting.randomElement(using: &generator)!
            }
            let prefix = Array("GET ".utf8)
            let bytes = prefix + target + Array(" HTTP/1.1\r\nHost: a.example\r\n\r\n".utf8)
            let expected = byteLoop(target)
            var parser = RequestHeadParser()
            let result = bytes.withUnsafeBufferPointer { parser.parse($0) }
            if let error = expected.error {
                #expect(result == .failed(error), "\(target)")
                if result != .failed(error) { return }
            } else if expected.end == target.count {
                guard case .complete(let head) = result else {
                    Issue.record("\(target): \(result)")
                    return
                }
                #expect(head.targetRange == prefix.count..<(prefix.count + target.count), "\(target)")
                #expect(head.pathRange == prefix.count..<(prefix.count + (expected.question ?? target.count)), "\(target)")
            } else {
                // A space inside the target ends it early: what follows is no HTTP version.
                guard case .failed = result else {
                    Issue.record("\(target): \(result)")
                    return
                }
            }
        }
    }
}
