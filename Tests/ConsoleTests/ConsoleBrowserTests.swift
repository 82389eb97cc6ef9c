import Foundation
import TestSupport
import Testing

/// The console in a real browser (Debian's chromium, driven by selenium from `.ci/venv`), against the
/// real binary serving 100,000 hosts. Screenshots are kept under `.build/console-screenshots/`.
@Suite("The admin console in chromium", .serialized)
struct ConsoleBrowserTests {
    @Test("pages load without console errors or CSP violations; search finds one host in 100,000; match answers; markup stays text")
    func browser() throws {
        let python = TestPaths.repositoryRoot + "/.ci/venv/bin/python"
        try #require(FileManager.default.isExecutableFile(atPath: python), ".ci/run creates .ci/venv with selenium")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), ".ci/run installs chromium and chromium-driver")
        let sites = (0..<50_000).map { index in
            #"{"hosts":["shop\#(index).example.com","www.shop\#(index).example.com"],"applinks":{"details":[{"apps":["shop"],"components":[{"/":"/p/\#(index)/*"}]}]}}"#
        }
        let config = #"""
            {"version":1,"apps":{"shop":"ABCDE12345.com.example.shop"},"sites":[\#(sites.joined(separator: ","))],
             "server":{"listen":["127.0.0.1:0"],"admin":"127.0.0.1:0","accessLog":false}}
            """#
        let server = try ServerProcess(config: config)
        defer { server.stop() }
        let wanted = "shop31337.example.com"
        let client = try RawClient(port: server.port)
        client.send("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: \(wanted)\r\nUser-Agent: AASA-Bot/1.0.0\r\n\r\n")
        #expect(client.readResponses(1).first?.status == 200)
        #expect(
            waitUntil(5) {
                String(
                    decoding: (try? runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/status"]))?.stdout ?? [],
                    as: UTF8.self
                ).contains(wanted)
            }
        )
        let screenshots = TestPaths.repositoryRoot + "/.build/console-screenshots"
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        let result = try runTool(
            [
                // One chromium at a time: the suites run in parallel, and two browsers on 2 cores time out.
                "flock", "-w", "180", TestPaths.chromiumLock, python,
                TestPaths.repositoryRoot + "/Tests/ConsoleTests/Fixtures/console-browser.py",
                "http://127.0.0.1:\(server.adminPort)", wanted, screenshots,
            ],
            timeout: 300
        )
        #expect(result.status == 0, "\(String(decoding: result.stdout, as: UTF8.self))\(result.stderr)")
        for name in ["console-index.png", "console-host.png", "console-phone.png"] {
            #expect(FileManager.default.fileExists(atPath: screenshots + "/" + name), "\(name) kept for CI")
        }
    }
}
