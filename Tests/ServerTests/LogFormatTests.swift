import Foundation
import TestSupport
import Testing

/// The server's stderr is a log: one line per event, and with `server.logFormat: "json"` one JSON object
/// per line, config findings carrying their file, line, column and rule.
@Suite("Server log lines", .serialized)
struct LogFormatTests {
    /// A site whose exclusion matches URLs without the query item: a warning at start.
    static func config(logFormat: String?) -> String {
        let format = logFormat.map { #", "logFormat": "\#($0)""# } ?? ""
        return #"""
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
             "sites": [{"hosts": ["example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [
               {"?": {"no_universal_links": "*"}, "exclude": true}, {"/": "/*"}]}]}}],
             "server": {"listen": ["127.0.0.1:0"], "admin": "off"\#(format)}}
            """#
    }

    @Test("Text: a finding at start is one line with file:line:column and rule, never a caret excerpt; a rejected reload likewise")
    func textLines() throws {
        let server = try ServerProcess(config: Self.config(logFormat: nil))
        defer { server.stop() }
        let lines = server.stderr.split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("aasa-server: ") }, "\(server.stderr)")
        #expect(
            lines.contains {
                $0.contains("config.json:3:") && $0.contains("warning:")
                    && $0.hasSuffix("[query.matches-absent] (at $.sites[0].applinks.details[0].components[0][\"?\"].no_universal_links)")
            }
        )
        #expect(!server.stderr.contains("^"), "caret excerpts belong to the CLI")
        try Data(
            #"{"version": 1, "sites": [{"hosts": ["example.com"], "webcredentials": {"apps": ["shopp"]}}], "server": {"listen": ["127.0.0.1:0"], "admin": "off"}}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: server.directory + "/config.json"))
        server.signal(SIGHUP)
        #expect(waitUntil(5) { server.stderr.contains("rejected, still serving generation 1: 1 error") })
        #expect(waitUntil(2) { server.stderr.contains("error: no app named \"shopp\"") })
        #expect(server.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("aasa-server: ") }, "\(server.stderr)")
    }

    @Test("JSON: every stderr line is a JSON object with time, level and msg; findings add file, line, column, rule")
    func jsonLines() throws {
        let server = try ServerProcess(config: Self.config(logFormat: "json"))
        defer { server.stop() }
        func objects() -> [[String: Any]] {
            server.stderr.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            }
        }
        let lineCount = server.stderr.split(separator: "\n").count
        #expect(objects().count == lineCount, "every line parses: \(server.stderr)")
        #expect(objects().allSatisfy { $0["time"] is String && $0["level"] is String && $0["msg"] is String })
        let warning = try #require(objects().first { $0["rule"] as? String == "query.matches-absent" })
        #expect(warning["level"] as? String == "warning")
        #expect((warning["file"] as? String)?.hasSuffix("/config.json") == true)
        #expect(warning["line"] as? Int == 3)
        #expect(warning["column"] is Int)
        #expect(objects().contains { ($0["msg"] as? String)?.hasPrefix("serving 1 site") == true && $0["level"] as? String == "info" })

        // A rejected reload: the summary and each error as objects.
        try Data(
            #"{"version": 1, "sites": [{"hosts": ["example.com"], "webcredentials": {"apps": ["shopp"]}}], "server": {"listen": ["127.0.0.1:0"], "admin": "off", "logFormat": "json"}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: server.directory + "/config.json"))
        server.signal(SIGHUP)
        #expect(waitUntil(5) { objects().contains { $0["rule"] as? String == "app.unknown" } }, "\(server.stderr)")
        let error = try #require(objects().first { $0["rule"] as? String == "app.unknown" })
        #expect(
            error["level"] as? String == "error" && error["line"] as? Int == 1
                && error["path"] as? String == "$.sites[0].webcredentials.apps[0]"
        )
        #expect(
            objects().contains {
                ($0["msg"] as? String)?.contains("rejected, still serving generation 1") == true && $0["level"] as? String == "error"
            }
        )
        #expect(objects().count == server.stderr.split(separator: "\n").count)
    }
}
