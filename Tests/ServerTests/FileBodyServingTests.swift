import Foundation
import Glibc
import TestSupport
import Testing

@testable import Server

/// Documents of 8 KB or more are sent on plain connections by the kernel from a sealed memory file
/// (`sendfile`); smaller ones, and every TLS answer, are copied as before. Traced with strace, which sees the
/// system calls the real binary makes.
@Suite("Large documents sent from a sealed memory file", .serialized)
struct FileBodyServingTests {
    /// A valid AASA file of about 60 bytes a component.
    static func document(_ components: Int) -> String {
        let items = (0..<components).map { #"{"/": "/collection-\#($0)/*", "comment": "collection \#($0) pages"}"# }
        return #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": ["#
            + items.joined(separator: ", ") + "]}]}}"
    }

    static let large = document(1_600)
    static let middle = document(160)
    static let small = document(20)

    /// The server, traced from its first request: strace attaches to its threads (a server started by strace
    /// would inherit the test runner's blocked signals through it and not stop on SIGTERM).
    static func start(trace: String) throws -> (server: ServerProcess, tracer: Process) {
        let pki = try TestPKI()
        let config = #"""
            {"version": 1, "sites": [
               {"hosts": ["large.tenant.example.com"], "file": "large.aasa"},
               {"hosts": ["middle.tenant.example.com"], "file": "middle.aasa"},
               {"hosts": ["small.tenant.example.com"], "file": "small.aasa"}],
             "server": \#(TestPKI.serverSection)}
            """#
        let files = pki.files.merging(["large.aasa": large, "middle.aasa": middle, "small.aasa": small]) { $1 }
        let server = try ServerProcess(config: config, files: files)
        let tracer = Process()
        tracer.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        tracer.arguments = ["-f", "-p", String(server.pid), "-e", "trace=sendfile,sendmsg,sendto,writev", "-e", "signal=none", "-o", trace]
        let attached = trace + ".attached"
        _ = FileManager.default.createFile(atPath: attached, contents: nil)
        tracer.standardError = FileHandle(forWritingAtPath: attached)
        tracer.standardOutput = FileHandle.nullDevice
        try tracer.run()
        // "Process N attached with M threads": every thread at once.
        guard waitUntil(10, { ((try? String(contentsOfFile: attached, encoding: .utf8)) ?? "").contains("attached") }) else {
            tracer.terminate()
            server.stop()
            throw TestFailure("strace did not attach: \((try? String(contentsOfFile: attached, encoding: .utf8)) ?? "")")
        }
        return (server, tracer)
    }

    /// `body` with the traced server, a connection to it and the trace's path.
    static func withTracedServer(_ body: (ServerProcess, RawClient, String) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let trace = directory + "/trace"
            let (server, tracer) = try start(trace: trace)
            defer {
                kill(tracer.processIdentifier, SIGKILL)
                _ = waitUntil(5) { !tracer.isRunning }
                server.stop()
            }
            let client = try RawClient(port: server.port)
            // Closed before the server stops, which would otherwise wait for it to finish.
            defer { shutdown(client.fd, Int32(SHUT_RDWR)) }
            try body(server, client, trace)
        }
    }

    static func get(_ host: String, method: String = "GET") -> String {
        "\(method) /.well-known/apple-app-site-association HTTP/1.1\r\nHost: \(host).tenant.example.com\r\n\r\n"
    }

    /// The `sendfile` calls traced so far: (bytes asked for, the result).
    static func sendfileCalls(_ trace: String) -> [(asked: Int, result: String)] {
        let text = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let call = line.range(of: "sendfile(") else { return nil }
            let rest = line[call.upperBound...]
            guard let close = rest.range(of: ") = ") else { return nil }
            let arguments = rest[..<close.lowerBound].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let asked = arguments.last.flatMap({ Int($0) }) else { return nil }
            return (asked, String(rest[close.upperBound...]))
        }
    }

    @Test(
        "A document of 8 KB or more goes by sendfile, header lines first with MSG_MORE; a small answer and a HEAD are one send each, a TLS answer is written as before; every byte the same"
    )
    func sentFromFile() throws {
        try Self.withTracedServer { server, client, trace in
            for (host, expected) in [("large", Self.large), ("middle", Self.middle), ("small", Self.small)] {
                client.send(Self.get(host))
                let response = try #require(client.readResponses(1).first, "\(host)")
                #expect(response.status == 200)
                #expect(response.header("Content-Type") == "application/json")
                #expect(response.header("Content-Length") == String(expected.utf8.count))
                #expect(response.bodyText == expected, "\(host)")
            }
            client.send(Self.get("large", method: "HEAD"))
            let head = try #require(client.readResponses(1, headRequests: 1).first)
            #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == String(Self.large.utf8.count))
            // Nothing after the HEAD's header lines: the next answer starts right where it ends.
            client.send(Self.get("small"))
            #expect(client.readResponses(1).first?.bodyText == Self.small)

            let tls = try runTool(
                [
                    "curl", "-s", "--cacert", server.directory + "/ca.pem", "--resolve",
                    "large.tenant.example.com:\(server.proxyPort):127.0.0.1",
                    "https://large.tenant.example.com:\(server.proxyPort)/.well-known/apple-app-site-association",
                ]
            )
            #expect(tls.status == 0 && String(decoding: tls.stdout, as: UTF8.self) == Self.large, "\(tls.stderr)")

            let large = Self.large.utf8.count
            let middle = Self.middle.utf8.count
            #expect(waitUntil(5) { Self.sendfileCalls(trace).count >= 2 }, "\(Self.sendfileCalls(trace))")
            let calls = Self.sendfileCalls(trace)
            // Two bodies, each whole in one call; not the small one, not the HEAD, not over TLS.
            #expect(calls.map(\.asked) == [large, middle], "\(calls)")
            #expect(calls.map(\.result) == [String(large), String(middle)], "\(calls)")
            let text = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n")
            // The header lines before each body: one sendmsg that says more follows.
            let before = lines.filter { $0.contains("sendmsg(") && $0.contains("MSG_MORE") }
            #expect(before.count == 2, "the header lines before each body: \(text.prefix(4000))")
            // The small document's two answers and the HEAD's header lines: each one send of all its bytes.
            let small = Self.small.utf8.count
            let whole = lines.filter { $0.contains("sendto(") }
            let sent = whole.compactMap(Self.sentCount)
            #expect(sent.count == 3 && sent.filter { $0 > small }.count == 2 && sent.filter { $0 < 1_000 }.count == 1, "\(whole)")
            #expect(!lines.contains { $0.contains("writev(") }, "nothing here is over 4 KiB but the file-sent bodies")
        }
    }

    /// What a traced `sendto` returned.
    static func sentCount(_ line: Substring) -> Int? {
        guard let equals = line.range(of: ") = ", options: .backwards) else { return nil }
        return Int(line[equals.upperBound...].prefix { $0.isNumber })
    }

    @Test("Pipelined answers to a reader that stops: sendfile stops part-way and resumes where it stopped; every answer whole and in order")
    func partialSends() throws {
        try Self.withTracedServer { server, client, trace in
            var small: Int32 = 65536
            setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            // About 9 MB of answers, more than the kernel buffers on loopback; the last request closes.
            let hosts = (0..<120).map { ["large", "middle", "small", "large"][$0 % 4] }
            // "\r\n" is one Character: dropping one drops the blank line.
            client.send(hosts.dropLast().map { Self.get($0) }.joined() + Self.get(hosts.last!).dropLast(1) + "Connection: close\r\n\r\n")
            // The reader waits: the server's socket fills, a send stops part-way or would block.
            Thread.sleep(forTimeInterval: 0.5)
            let (bytes, closed) = client.read(timeout: 30)
            #expect(closed)
            let responses = HTTPResponse.parseAll(bytes)
            #expect(responses.count == hosts.count)
            for (index, (response, host)) in zip(responses, hosts).enumerated() {
                let expected = host == "large" ? Self.large : host == "middle" ? Self.middle : Self.small
                #expect(
                    response.status == 200 && response.bodyText == expected,
                    "answer \(index) for \(host): \(response.status) \(response.headers) \(response.body.count) bytes"
                )
            }
            // The calls, walked in order: each asks for exactly what its body has left, and the bodies are the
            // file-sent answers' in the order they were asked for.
            let calls = Self.sendfileCalls(trace)
            var bodies = hosts.filter { $0 != "small" }.map { $0 == "large" ? Self.large.utf8.count : Self.middle.utf8.count }[...]
            var stopped = 0
            for call in calls {
                let remaining = try #require(bodies.first, "a sendfile call after every body was sent: \(call)")
                #expect(call.asked == remaining, "\(call) with \(remaining) bytes of the body left")
                guard let sent = Int(call.result) else {
                    #expect(call.result.hasPrefix("-1 EAGAIN"), "\(call)")
                    stopped += 1
                    continue
                }
                if sent < remaining {
                    stopped += 1
                    bodies[bodies.startIndex] = remaining - sent
                } else {
                    bodies.removeFirst()
                }
            }
            #expect(bodies.isEmpty, "bodies not sent whole: \(Array(bodies))")
            #expect(stopped > 0, "no send stopped part-way: the test did not reach what it tests")
        }
    }

    @Test("docs/serving.md states the sizes and the limits in force")
    func documented() throws {
        let text = try String(contentsOfFile: TestPaths.repositoryRoot + "/docs/serving.md", encoding: .utf8)
            .replacingOccurrences(of: "\n", with: " ")
        #expect(PreparedDocument.minimumSentFromFile == 8 * 1024)
        #expect(text.contains("A document of 8 KiB or more is also kept in a sealed memory file"))
        #expect(PreparedDocument.filesKept.count == 1_024 && PreparedDocument.filesKept.bytes == 32 << 20)
        #expect(text.contains("at most 1,024 of them and 32 MiB are kept"))
        #expect(EventLoop.copiedWriteLimit == 4 * 1024)
        #expect(text.contains("when it is 4 KiB or less in all"))
        #expect(text.contains("Each event loop keeps the last single answer it wrote that way as written"))
        #expect(text.contains("what it keeps it lets go of within 100 ms") && EventLoop.sweepMilliseconds == 100)
        // The sizes the test documents are chosen around.
        #expect(
            Self.middle.utf8.count > PreparedDocument.minimumSentFromFile && Self.small.utf8.count < PreparedDocument.minimumSentFromFile
        )
    }
}
