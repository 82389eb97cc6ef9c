import Foundation
import TestSupport
import Testing

/// `match --cases FILE --junit OUT`: each URL against its own expectation, a summary line, exit 1 on any
/// difference, and a JUnit report with a suite per host.
@Suite("match --cases and its JUnit report")
struct MatchCasesTests {
    @Test("Cases as expected pass, a wrong one fails the run and is the report's failure; names and reasons escaped")
    func casesAndReport() throws {
        try withTemporaryDirectory { directory in
            let cases = #"""
                [{"url": "https://go.example.com/p/42", "expect": "shop"},
                 {"url": "https://go.example.com/admin/<x>", "expect": "none"},
                 {"url": "https://go.example.com/admin/users", "expect": "shop", "comment": "wrong on purpose"},
                 {"url": "https://open.example.com/p/1", "expect": "ABCDE12345.com.example.shop", "ios": 12}]
                """#
            try write(cases, to: directory + "/cases.json")
            let result = try runTool([
                TestPaths.serverExecutable, "match", "--config", TestPaths.repositoryRoot + "/config/examples/link-domain.json",
                "--cases", directory + "/cases.json", "--junit", directory + "/report.xml",
            ])
            let output = String(decoding: result.stdout, as: UTF8.self)
            #expect(result.status == 1, "\(output)\(result.stderr)")
            #expect(output.contains("4 cases: 2 as expected, 2 not\n"), "\(output)")
            #expect(output.contains("MISMATCH: expected ABCDE12345.com.example.shop, got none"), "\(output)")
            let report = try String(contentsOfFile: directory + "/report.xml", encoding: .utf8)
            #expect(
                report.hasPrefix(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"aasa-server match\" tests=\"4\" failures=\"2\">\n"
                ),
                "\(report)"
            )
            #expect(report.contains("  <testsuite name=\"go.example.com\" tests=\"3\" failures=\"1\">\n"))
            #expect(report.contains("<testcase classname=\"go.example.com\" name=\"https://go.example.com/admin/&lt;x&gt;\">"))
            #expect(report.contains("<failure message=\"expected ABCDE12345.com.example.shop, got none\" type=\"match.mismatch\">"))
            // iOS 12 reads only appID + paths: the modern-only document opens nothing there.
            #expect(report.contains("  <testsuite name=\"open.example.com\" tests=\"1\" failures=\"1\">\n"), "\(report)")
            #expect(report.contains("name=\"https://open.example.com/p/1 (iOS 12)\""))
            #expect(!report.contains("<x>"), "markup from a case stays text")
        }
    }
}
