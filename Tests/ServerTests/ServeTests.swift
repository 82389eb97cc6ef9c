import Foundation
import Glibc
import Gzip
import TestSupport
import Testing

@Suite("serve: AASA responses", .serialized)
struct ServeResponseTests {
    @Test("GET on both AASA paths: 200 application/json with every promised header, never a redirect")
    func getHeaders() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        for path in ["/.well-known/apple-app-site-association", "/apple-app-site-association", "/apple-app-site-association?x=1"] {
            let client = try RawClient(port: server.port)
            client.send("GET \(path) HTTP/1.1\r\nHost: example.com\r\n\r\n")
            let response = try #require(client.readResponses(1).first)
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json")
            #expect(response.header("Content-Length") == String(response.body.count))
            #expect(response.header("ETag")?.hasPrefix("\"") == true)
            #expect(response.header("Last-Modified")?.hasSuffix(" GMT") == true)
            #expect(response.header("Cache-Control") == "public, max-age=3600")
            #expect(response.header("Date")?.hasSuffix(" GMT") == true)
            #expect(response.header("Location") == nil)
            #expect(response.header("Vary") == "Accept-Encoding")
            #expect(response.bodyText.hasPrefix(#"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"]"#))
        }
        // A server without a link store loads neither store's library (each is opened when a store is in it).
        #expect(!server.hasLoaded(library: "libsqlite3.so") && !server.hasLoaded(library: "libpq.so"))
    }

    @Test("HEAD gives exactly GET's headers and no body")
    func headParity() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send(
            "HEAD /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\nGET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"
        )
        let responses = client.readResponses(2, headRequests: 1)
        #expect(responses.count == 2)
        let (head, get) = (responses[0], responses[1])
        #expect(head.body.isEmpty)
        #expect(head.headers.map(\.0) == get.headers.map(\.0))
        for (name, value) in get.headers where name != "Date" {
            #expect(head.header(name) == value, "\(name)")
        }
    }

    @Test(
        "One keep-alive connection asking in turn: each answer is its own (host, HEAD, Connection: close), its Date the second it is sent in"
    )
    func keptAnswerNeverStale() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        func ask(_ method: String = "GET", host: String = "example.com", close: Bool = false) throws -> HTTPResponse {
            client.send(
                "\(method) /.well-known/apple-app-site-association HTTP/1.1\r\nHost: \(host)\r\n\(close ? "Connection: close\r\n" : "")\r\n"
            )
            return try #require(client.readResponses(1, headRequests: method == "HEAD" ? 1 : 0).first)
        }
        let first = try ask()
        let again = try ask()
        #expect(again.bodyText == first.bodyText && again.header("Content-Length") == first.header("Content-Length"))
        let head = try ask("HEAD")
        #expect(head.body.isEmpty && head.header("Content-Length") == first.header("Content-Length"))
        let tenant = try ask(host: "shop.tenant.example.com")
        #expect(tenant.bodyText.contains("webcredentials") && tenant.bodyText != first.bodyText)
        #expect(try ask().bodyText == first.bodyText)
        // The same answer a second later carries that second's Date.
        let before = try #require(first.header("Date"))
        var later = try ask()
        let deadline = Date().addingTimeInterval(3)
        while later.header("Date") == before && Date() < deadline {
            usleep(200_000)
            later = try ask()
        }
        #expect(later.header("Date") != before && later.bodyText == first.bodyText)
        let closing = try ask(close: true)
        #expect(closing.header("Connection") == "close" && closing.bodyText == first.bodyText)
    }

    @Test("Host selection: exact, www, letter case, trailing dot, port; wildcard; unknown hosts get the empty document")
    func hostSelection() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        func body(_ host: String) throws -> HTTPResponse {
            let client = try RawClient(port: server.port)
            client.send("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: \(host)\r\n\r\n")
            return try #require(client.readResponses(1).first)
        }
        let apex = try body("example.com")
        for host in ["www.example.com", "EXAMPLE.COM", "example.com.", "example.com:443", "WWW.Example.Com.:8080"] {
            #expect(try body(host).body == apex.body, "\(host)")
        }
        let tenant = try body("shop.tenant.example.com")
        #expect(tenant.bodyText.contains("webcredentials"))
        let unknown = try body("nobody.example.org")
        #expect(unknown.status == 200)
        #expect(unknown.bodyText == #"{"applinks":{"details":[]}}"#)
        #expect(try body("tenant.example.com").bodyText == unknown.bodyText, "a wildcard does not cover its apex")
    }

    @Test("An absolute-form target's authority overrides the Host header")
    func absoluteForm() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("GET http://shop.tenant.example.com/.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n")
        let response = try #require(client.readResponses(1).first)
        #expect(response.bodyText.contains("webcredentials"))
    }

    @Test("unknownHost 404 answers unknown hosts with a JSON 404")
    func unknownHost404() throws {
        let server = try ServerProcess(config: testConfig(unknownHost: "404"))
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: nobody.example.org\r\n\r\n")
        let response = try #require(client.readResponses(1).first)
        #expect(response.status == 404)
        #expect(response.header("Content-Type") == "application/json")
    }

    @Test(
        "Other paths, methods and versions get 404, 405 with Allow, 501 and 505",
        arguments: [
            ("GET /.well-known/apple-app-site-association/ HTTP/1.1", 404),
            ("GET /.well-known/apple-app-site-association.json HTTP/1.1", 404),
            ("GET /apple-app-site-association.json HTTP/1.1", 404),
            ("GET / HTTP/1.1", 404),
            ("GET /.WELL-KNOWN/apple-app-site-association HTTP/1.1", 404),
            ("POST /.well-known/apple-app-site-association HTTP/1.1", 405),
            ("DELETE /apple-app-site-association HTTP/1.1", 405),
            ("OPTIONS /apple-app-site-association HTTP/1.1", 405),
            ("BREW /.well-known/apple-app-site-association HTTP/1.1", 501),
            ("get /.well-known/apple-app-site-association HTTP/1.1", 501),
            ("GET /.well-known/apple-app-site-association HTTP/2.0", 505),
        ]
    )
    func statuses(requestLine: String, status: Int) throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("\(requestLine)\r\nHost: example.com\r\n\r\n")
        let response = try #require(client.readResponses(1).first)
        #expect(response.status == status)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Location") == nil)
        if status == 405 { #expect(response.header("Allow") == "GET, HEAD") }
    }

    @Test("gzip: served with Content-Encoding and Vary from the first request on, decompresses to the same bytes (curl --compressed)")
    func gzip() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send(
            "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nAccept-Encoding: br, gzip;q=0.8\r\n\r\nGET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nAccept-Encoding: gzip;q=0\r\n\r\n"
        )
        let responses = client.readResponses(2)
        #expect(responses.count == 2)
        let zipped = try #require(responses.first)
        #expect(zipped.header("Content-Encoding") == "gzip")
        #expect(zipped.header("Vary") == "Accept-Encoding")
        #expect(zipped.header("ETag")?.hasSuffix("-gz\"") == true)
        let plain = try #require(responses.last)
        #expect(plain.header("Content-Encoding") == nil)
        #expect(try Gzip.decompress(zipped.body) == plain.body)
        #expect(zipped.body.count < plain.body.count)
        let curl = try runTool([
            "curl", "-s", "--compressed", "-H", "Host: example.com",
            "http://127.0.0.1:\(server.port)/.well-known/apple-app-site-association",
        ])
        #expect(curl.status == 0)
        #expect(curl.stdout == plain.body)
        let curlHead = try runTool([
            "curl", "-sI", "--compressed", "-H", "Host: example.com",
            "http://127.0.0.1:\(server.port)/.well-known/apple-app-site-association",
        ])
        #expect(String(decoding: curlHead.stdout, as: UTF8.self).lowercased().contains("content-encoding: gzip"))
    }

    @Test("A small document is not compressed")
    func smallNotCompressed() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: a.tenant.example.com\r\nAccept-Encoding: gzip\r\n\r\n")
        let response = try #require(client.readResponses(1).first)
        #expect(response.header("Content-Encoding") == nil)
        #expect(response.header("Vary") == nil)
    }

    @Test("healthPath answers 200 on the main listener for load-balancer checks")
    func healthPath() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "off", "healthPath": "/healthz"}"#)
        )
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("GET /healthz HTTP/1.1\r\nHost: lb\r\n\r\nPOST /healthz HTTP/1.1\r\nHost: lb\r\nContent-Length: 0\r\n\r\n")
        let responses = client.readResponses(2)
        #expect(responses.map(\.status) == [200, 405])
        #expect(server.adminPort == 0)
    }
}

@Suite("serve: connections and HTTP/1.1 rules", .serialized)
struct ServeConnectionTests {
    static let request = "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"

    @Test("Keep-alive by default; pipelined requests are answered in order; Connection: close closes")
    func keepAliveAndPipelining() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send(
            Self.request + "GET /nope HTTP/1.1\r\nHost: example.com\r\n\r\n"
                + Self.request.replacingOccurrences(of: "\r\n\r\n", with: "\r\nConnection: close\r\n\r\n")
        )
        let (bytes, closed) = client.read(timeout: 5)
        let responses = HTTPResponse.parseAll(bytes)
        #expect(responses.map(\.status) == [200, 404, 200])
        #expect(responses[0].header("Connection") == nil)
        #expect(responses[2].header("Connection") == "close")
        #expect(closed)
    }

    @Test("Leading empty lines are ignored; a half-closed client still gets its answer")
    func leadingLinesAndHalfClose() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("\r\n\r\n" + Self.request)
        client.shutdownWrite()
        let (bytes, closed) = client.read(timeout: 5)
        #expect(HTTPResponse.parseAll(bytes).map(\.status) == [200])
        #expect(closed)
    }

    @Test("HTTP/1.0 closes unless it asks for keep-alive, which is then confirmed")
    func http10() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let plain = try RawClient(port: server.port)
        plain.send("GET /.well-known/apple-app-site-association HTTP/1.0\r\nHost: example.com\r\n\r\n")
        let (bytes, closed) = plain.read(timeout: 5)
        #expect(HTTPResponse.parseAll(bytes).first?.status == 200)
        #expect(closed)
        let kept = try RawClient(port: server.port)
        kept.send("GET /.well-known/apple-app-site-association HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let response = try #require(kept.readResponses(1).first)
        #expect(response.header("Connection") == "keep-alive")
        #expect(response.bodyText == #"{"applinks":{"details":[]}}"#, "HTTP/1.0 without Host is an unknown host")
        kept.send(Self.request)
        #expect(kept.readResponses(1).first?.status == 200)
    }

    @Test("After maxRequestsPerConnection the response says Connection: close and the connection ends")
    func requestCap() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "off", "maxRequestsPerConnection": 3}"#)
        )
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send(String(repeating: Self.request, count: 5))
        let (bytes, closed) = client.read(timeout: 5)
        let responses = HTTPResponse.parseAll(bytes)
        #expect(responses.count == 3)
        #expect(responses.last?.header("Connection") == "close")
        #expect(closed)
    }

    @Test(
        "Malformed requests: the right 4xx/5xx, then the connection closes",
        arguments: [
            ("GET / HTTP/1.1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a@b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a:x\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n folded\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nX: \u{1}\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
            ("GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505),
            // The whole message is judged before it is answered: a bad chunk size is the answer, not a 404.
            ("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        ]
    )
    func malformed(request: String, status: Int) throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send(request + Self.request)
        let (bytes, closed) = client.read(timeout: 5)
        let responses = HTTPResponse.parseAll(bytes)
        #expect(responses.first?.status == status, "\(request.debugDescription)")
        #expect(responses.count == 1, "nothing after a framing error is answered")
        #expect(responses.first?.header("Connection") == "close")
        #expect(closed)
    }

    @Test("OPTIONS * answers what the server allows; '*' with another method is 400")
    func asteriskForm() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n")
        let options = client.readResponses(1).first
        #expect(options?.status == 200)
        #expect(options?.header("Allow") == "GET, HEAD")
        let other = try RawClient(port: server.port)
        other.send("GET * HTTP/1.1\r\nHost: example.com\r\n\r\n")
        let (bytes, closed) = other.read(timeout: 5)
        #expect(HTTPResponse.parseAll(bytes).first?.status == 400)
        #expect(closed)
    }

    @Test("Bytes that cannot start a request (a TLS ClientHello on the plain port) get 400 and close at once, not at the header timeout")
    func notHTTPAtOnce() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "off", "timeouts": {"header": 30}}"#)
        )
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        let started = monotonicSeconds()
        client.send([0x16, 0x03, 0x01, 0x00, 0xA5, 0x01, 0x00, 0x00])
        let (bytes, closed) = client.read(timeout: 5)
        #expect(monotonicSeconds() - started < 2)
        #expect(HTTPResponse.parseAll(bytes).first?.status == 400)
        #expect(closed)
    }

    @Test("Bodies on GET are read and discarded (length and chunked); over the limit is 413 and close")
    func bodies() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "off", "limits": {"bodyBytes": 16}}"#)
        )
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send(
            "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello"
                + "GET /x HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + Self.request
        )
        #expect(client.readResponses(3).map(\.status) == [200, 404, 200])
        let big = try RawClient(port: server.port)
        // A pipelined good request first: its answer must not be lost when the next one is refused.
        big.send(Self.request + "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nContent-Length: 100\r\n\r\n")
        let (bytes, closed) = big.read(timeout: 5)
        #expect(HTTPResponse.parseAll(bytes).map(\.status) == [200, 413])
        #expect(closed)
    }

    @Test("Limits from the config: request line → 414, header section → 431, field count → 431")
    func limits() throws {
        let server = try ServerProcess(
            config: testConfig(
                server:
                    #"{"listen": ["127.0.0.1:0"], "admin": "off", "limits": {"requestLineBytes": 128, "headerBytes": 256, "headerCount": 4}}"#
            )
        )
        defer { server.stop() }
        let cases: [(String, Int)] = [
            ("GET /" + String(repeating: "a", count: 200) + " HTTP/1.1\r\nHost: a\r\n\r\n", 414),
            ("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "b", count: 400) + "\r\n\r\n", 431),
            ("GET / HTTP/1.1\r\nHost: a\r\n" + (0..<6).map { "X-\($0): 1\r\n" }.joined() + "\r\n", 431),
        ]
        for (request, status) in cases {
            let client = try RawClient(port: server.port)
            client.send(request)
            let (bytes, closed) = client.read(timeout: 5)
            #expect(HTTPResponse.parseAll(bytes).first?.status == status)
            #expect(closed)
        }
    }

    @Test("Header deadline: a trickling client gets 408 and is closed when the total time runs out")
    func headerTimeout() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "off", "timeouts": {"header": 1}}"#)
        )
        defer { server.stop() }
        let started = monotonicSeconds()
        let client = try RawClient(port: server.port)
        // A byte every 300 ms would keep a per-read timer alive forever; the deadline is total.
        for byte in "GET / HTTP/1.1\r\n" {
            client.send(String(byte))
            usleep(300_000)
            if monotonicSeconds() - started > 1.6 { break }
        }
        let (bytes, closed) = client.read(timeout: 3)
        #expect(closed)
        #expect(HTTPResponse.parseAll(bytes).first?.status == 408)
        let elapsed = monotonicSeconds() - started
        #expect(elapsed >= 0.9 && elapsed < 2.5, "closed after \(elapsed) s")
        // A connection that sends nothing at all is closed silently.
        let silent = try RawClient(port: server.port)
        let (nothing, silentClosed) = silent.read(timeout: 3)
        #expect(nothing.isEmpty && silentClosed)
    }

    @Test("Keep-alive idle timeout closes an idle connection; memory for idle connections is released")
    func idleTimeout() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "off", "timeouts": {"keepAlive": 1}}"#)
        )
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send(Self.request)
        #expect(client.readResponses(1).first?.status == 200)
        let started = monotonicSeconds()
        let (_, closed) = client.read(timeout: 3)
        #expect(closed)
        let elapsed = monotonicSeconds() - started
        #expect(elapsed >= 0.8 && elapsed < 2.0, "closed after \(elapsed) s")
    }

    @Test("Connection cap: at maxConnections an idle keep-alive connection is evicted for the new one")
    func connectionCap() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "maxConnections": 2, "threads": 1}"#)
        )
        defer { server.stop() }
        let idle = try RawClient(port: server.port)
        idle.send(Self.request)
        #expect(idle.readResponses(1).count == 1)
        let busy = try RawClient(port: server.port)
        busy.send("GET / HTTP/1.1\r\n")  // still sending its header
        #expect(server.waitForOpenConnections(2))
        let third = try RawClient(port: server.port)
        third.send(Self.request)
        #expect(third.readResponses(1).first?.status == 200)
        let (_, idleClosed) = idle.read(timeout: 2)
        #expect(idleClosed, "the idle keep-alive connection is evicted first")
        busy.send("Host: example.com\r\n\r\n")
        #expect(busy.readResponses(1).first?.status == 404, "the one mid-request survives")
        let metrics = try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/metrics"])
        #expect(String(decoding: metrics.stdout, as: UTF8.self).contains("aasa_connections_evicted_total 1"))
    }

    @Test(
        "Connection cap across event loops: clients stuck in their body are evicted (oldest first, on any loop) and new clients get in; the gauge never exceeds the cap"
    )
    func connectionCapBodies() throws {
        let cap = 24
        let server = try ServerProcess(
            config: testConfig(
                server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "maxConnections": \#(cap), "threads": 2, "accessLog": false}"#
            )
        )
        defer { server.stop() }
        func openConnections() throws -> Int {
            let text = String(decoding: try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/metrics"]).stdout, as: UTF8.self)
            let line = text.split(separator: "\n").first { $0.hasPrefix("aasa_open_connections ") }
            return line.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
        }
        // Fill the server with clients that announce a 64 KB body and send one byte of it.
        var stuck: [RawClient] = []
        for _ in 0..<cap {
            let client = try RawClient(port: server.port)
            client.send("GET / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 65536\r\n\r\nx")
            stuck.append(client)
            usleep(2_000)
        }
        #expect(waitUntil(5) { (try? openConnections()) == cap })
        // Loops learn each other's oldest connections on their timer tick (every 100 ms).
        usleep(300_000)
        // Every new client gets its answer, taking the place of the oldest stuck one; then the attacker
        // reconnects (the newest stuck client), so the server is full again for the next round.
        for round in 0..<10 {
            let fresh = try RawClient(port: server.port)
            fresh.send(Self.request.replacingOccurrences(of: "\r\n\r\n", with: "\r\nConnection: close\r\n\r\n"))
            #expect(fresh.readResponses(1, timeout: 5).first?.status == 200, "round \(round)")
            _ = fresh.read(timeout: 2)
            let open = try openConnections()
            #expect(open <= cap, "round \(round): \(open) open")
            let again = try RawClient(port: server.port)
            again.send("GET / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 65536\r\n\r\nx")
            stuck.append(again)
            #expect(waitUntil(5) { (try? openConnections()) == cap })
            usleep(150_000)
        }
        // The ten oldest were evicted, in order of age, whichever loop held them.
        for (position, client) in stuck.enumerated() {
            let (_, closed) = client.read(timeout: position < 10 ? 2 : 0.05)
            #expect(closed == (position < 10), "stuck client \(position)")
        }
        let metrics = String(decoding: try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/metrics"]).stdout, as: UTF8.self)
        #expect(metrics.contains("aasa_connections_evicted_total 10"))
    }

    @Test("No descriptor leaks: 200 connections later the server holds as many fds as before")
    func noDescriptorLeaks() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let before = server.openDescriptorCount
        for index in 0..<200 {
            let client = try RawClient(port: server.port)
            if index % 2 == 0 {
                client.send(Self.request.replacingOccurrences(of: "\r\n\r\n", with: "\r\nConnection: close\r\n\r\n"))
                _ = client.read(timeout: 5)
            } else {
                client.send("GARBAGE\r\n\r\n")
                _ = client.read(timeout: 5)
            }
        }
        #expect(waitUntil(3) { server.openDescriptorCount == before }, "before \(before), after \(server.openDescriptorCount)")
    }
}

@Suite("serve: load and stalls", .serialized)
struct ServeLoadTests {
    static let request = "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"

    @Test("A client that stops reading is dropped after the write timeout; others are unaffected")
    func stalledWrite() throws {
        let server = try ServerProcess(
            config: testConfig(
                server:
                    #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "timeouts": {"write": 1}, "threads": 1, "maxRequestsPerConnection": 100000}"#
            )
        )
        defer { server.stop() }
        let stalled = try RawClient(port: server.port)
        var small: Int32 = 4096
        setsockopt(stalled.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        // Far more response bytes than the socket buffers hold (~15 MB), and never read. The server
        // stops reading this client once its output backs up, so send from another thread.
        let flood = Array(String(repeating: Self.request, count: 6000).utf8)
        let sender = Thread { stalled.send(flood) }
        sender.start()
        let healthy = try RawClient(port: server.port)
        healthy.send(Self.request)
        #expect(healthy.readResponses(1).first?.status == 200, "one stalled client does not block the loop")
        let metricsURL = "http://127.0.0.1:\(server.adminPort)/metrics"
        let dropped = waitUntil(8) {
            let text = (try? runTool(["curl", "-s", metricsURL])).map { String(decoding: $0.stdout, as: UTF8.self) } ?? ""
            return text.contains(#"aasa_connection_timeouts_total{kind="write"} 1"#)
        }
        #expect(dropped)
        #expect(
            waitUntil(3) {
                let text = (try? runTool(["curl", "-s", metricsURL])).map { String(decoding: $0.stdout, as: UTF8.self) } ?? ""
                return text.contains("aasa_open_connections 1")
            },
            "only the healthy client is left"
        )
    }

    @Test("Main listeners defer accept: a silent connection is left to the kernel until its first bytes, then served at once")
    func deferredAccept() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "accessLog": false}"#)
        )
        defer { server.stop() }
        let metricsURL = "http://127.0.0.1:\(server.adminPort)/metrics"
        func openConnections() throws -> String? {
            let text = String(decoding: try runTool(["curl", "-s", metricsURL]).stdout, as: UTF8.self)
            return text.split(separator: "\n").first { $0.hasPrefix("aasa_open_connections ") }.map(String.init)
        }
        let silent = try RawClient(port: server.port)
        // Well inside the kernel's deferral (about a second): the server has not been handed the socket.
        usleep(300_000)
        #expect(try openConnections() == "aasa_open_connections 0")
        silent.send(Self.request)
        #expect(silent.readResponses(1, timeout: 2).first?.status == 200, "the first bytes hand the connection over")
        #expect(try openConnections() == "aasa_open_connections 1")
    }

    @Test("2,000 keep-alive connections are held open at once and every one is answered")
    func manyConnections() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "accessLog": false}"#)
        )
        defer { server.stop() }
        var clients: [RawClient] = []
        for _ in 0..<2000 { clients.append(try RawClient(port: server.port)) }
        for client in clients { client.send(Self.request) }
        var answered = 0
        for client in clients where client.readResponses(1, timeout: 5).first?.status == 200 { answered += 1 }
        #expect(answered == 2000)
        let metrics = try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/metrics"])
        #expect(String(decoding: metrics.stdout, as: UTF8.self).contains("aasa_open_connections 2000"))
    }
}
