import Foundation
import Glibc
import TestSupport
import Testing

/// Files the server reads are regular files of bounded size: a FIFO, a device or a huge file is refused by
/// name, at start-up, in `validate` and on a live reload, and never blocks or exhausts the server.
@Suite("Special and huge files", .serialized)
struct FileHardeningTests {
    static let server = #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "accessLog": false, "reload": {"watch": false}}"#

    static func config(file: String) -> String {
        #"{"version": 1, "sites": [{"hosts": ["example.com"], "file": "\#(file)"}], "server": \#(server)}"#
    }

    static let document = #"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/a/*"}]}]}}"#

    func validate(_ directory: String) throws -> (status: Int32, stderr: String, seconds: Double) {
        let started = monotonicSeconds()
        let result = try runTool([TestPaths.serverExecutable, "validate", "--config", directory + "/config.json"], timeout: 20)
        return (result.status, result.stderr, monotonicSeconds() - started)
    }

    @Test(
        "validate: /dev/zero, /dev/urandom, a FIFO, a directory and an 8 GiB sparse file as hosted documents are findings naming the file"
    )
    func validateSpecialFiles() throws {
        try withTemporaryDirectory { directory in
            #expect(mkfifo(directory + "/fifo", 0o644) == 0)
            #expect(
                truncate(directory + "/sparse", 8 << 30) == 0
                    || FileManager.default.createFile(atPath: directory + "/sparse", contents: nil)
            )
            let sparse = open(directory + "/sparse", O_WRONLY | O_CREAT, 0o644)
            #expect(ftruncate(sparse, 8 << 30) == 0)
            close(sparse)
            try FileManager.default.createDirectory(atPath: directory + "/folder", withIntermediateDirectories: true)
            for (file, message) in [
                ("/dev/zero", "is a character device, not a regular file"),
                ("/dev/urandom", "is a character device, not a regular file"),
                ("fifo", "is a FIFO (named pipe), not a regular file"),
                ("folder", "is a directory, not a regular file"),
                ("sparse", "is 8 GiB; the limit for this file is 1 MiB"),
            ] {
                try write(Self.config(file: file), to: directory + "/config.json")
                let result = try validate(directory)
                #expect(result.status == 1, "\(file): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(file): \(result.stderr)")
                #expect(result.stderr.contains("[file.unreadable]"))
                #expect(result.seconds < 10, "\(file) took \(result.seconds) s")
            }
        }
    }

    @Test("A FIFO nobody writes to or a device as the config itself: a usage error at once, not a hang")
    func specialConfig() throws {
        try withTemporaryDirectory { directory in
            #expect(mkfifo(directory + "/config.json", 0o644) == 0)
            let result = try validate(directory)
            #expect(result.status == 2)
            #expect(result.stderr.contains("is a FIFO (named pipe) nobody writes to"), "\(result.stderr)")
            #expect(result.seconds < 10)
            let serve = try runTool([TestPaths.serverExecutable, "serve", "--config", "/dev/zero"], timeout: 20)
            #expect(serve.status == 2)
            #expect(serve.stderr.contains("/dev/zero"))
            #expect(serve.stderr.contains("is a character device"))
        }
    }

    @Test("serve refuses to start on a FIFO as a document or a certificate, naming it, and leaves nothing listening")
    func startupRefusal() throws {
        let fifoDocument = try ServerProcess(config: Self.config(file: "doc"), waitForReady: false)
        defer { fifoDocument.stop() }
        #expect(mkfifo(fifoDocument.directory + "/doc", 0o644) == 0)
        // The process was started before the FIFO existed; start another that finds it.
        let second = try ServerProcess(
            config: Self.config(file: fifoDocument.directory + "/doc"),
            waitForReady: false
        )
        defer { second.stop() }
        #expect(second.waitForExit(10) == 1)
        #expect(second.stderr.contains("is a FIFO (named pipe), not a regular file"))
        #expect(!second.stderr.contains("listening on"))

        let tls = try ServerProcess(
            config: #"""
                {"version": 1, "sites": [{"hosts": ["example.com"], "webcredentials": {"apps": ["ABCDE12345.com.example.shop"]}}],
                 "server": {"listen": [{"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "off",
                            "certificates": [{"hosts": ["example.com"], "certificate": "/dev/zero", "key": "/dev/zero"}]}}
                """#,
            waitForReady: false
        )
        defer { tls.stop() }
        #expect(tls.waitForExit(10) == 1)
        #expect(tls.stderr.contains("cannot read /dev/zero: is a character device"))
    }

    @Test(
        "A live reload onto /dev/urandom, a FIFO or a huge file is an ordinary rejected reload: the old document serves, SIGTERM still works"
    )
    func liveReload() throws {
        let server = try ServerProcess(config: Self.config(file: "doc"), files: ["doc": Self.document])
        defer { server.stop() }
        func fetch() throws -> String {
            let client = try RawClient(port: server.port)
            client.send("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n")
            return client.readResponses(1).first?.bodyText ?? ""
        }
        #expect(try fetch() == Self.document)
        let directory = server.directory
        #expect(mkfifo(directory + "/fifo", 0o644) == 0)
        let huge = open(directory + "/huge", O_WRONLY | O_CREAT, 0o644)
        #expect(ftruncate(huge, 8 << 30) == 0)
        close(huge)
        var rejections = 0
        for (file, message) in [
            ("/dev/urandom", "is a character device"), ("fifo", "is a FIFO"), ("huge", "is 8 GiB"), ("/dev/zero", "is a character device"),
        ] {
            try atomicWrite(Self.config(file: file), to: directory + "/config.json")
            let started = monotonicSeconds()
            server.signal(SIGHUP)
            rejections += 1
            #expect(waitUntil(5) { server.stderr.components(separatedBy: "rejected, still serving generation 1").count - 1 == rejections })
            #expect(monotonicSeconds() - started < 5)
            #expect(server.stderr.contains(message), "\(file)")
            #expect(try fetch() == Self.document)
        }
        let ready = try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/readyz"])
        #expect(String(decoding: ready.stdout, as: UTF8.self).contains(#""lastReloadFailed":true"#))
        // A config cut down to "-" (once crashed the JSON parser, found by the fuzzer): rejected.
        try atomicWrite("-", to: directory + "/config.json")
        server.signal(SIGHUP)
        rejections += 1
        #expect(waitUntil(5) { server.stderr.components(separatedBy: "rejected, still serving generation 1").count - 1 == rejections })
        #expect(server.stderr.contains("[json.truncated]"))
        #expect(try fetch() == Self.document)
        // The config itself replaced by a FIFO: rejected too.
        try FileManager.default.removeItem(atPath: directory + "/config.json")
        #expect(mkfifo(directory + "/config.json", 0o644) == 0)
        server.signal(SIGHUP)
        #expect(
            waitUntil(5) {
                server.stderr.contains("config.json: is a FIFO") || server.stderr.contains("is a FIFO (named pipe), not a regular file")
            }
        )
        #expect(try fetch() == Self.document)
        let stopping = monotonicSeconds()
        server.signal(SIGTERM)
        #expect(server.waitForExit(10) == 0)
        #expect(monotonicSeconds() - stopping < 5)
    }
}
