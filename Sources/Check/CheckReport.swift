import AASA
import Support

/// The three ways `check` reports: for people, for programs (`--json`), for CI dashboards (`--junit`).
public enum CheckReport {
    /// `strict`: warnings fail a host as errors do (`--strict`), and every verdict says so.
    public static func human(_ reports: [HostReport], colour: Bool, verbose: Bool = true, strict: Bool = false) -> String {
        func paint(_ text: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
        var out = ""
        for report in reports {
            let header = report.target.origin + (report.address.map { "  (\($0))" } ?? "")
            out += paint(header, "1") + "\n"
            for finding in report.findings where verbose || finding.severity != .pass {
                let mark: String
                switch finding.severity {
                case .error: mark = paint("✗", "31")
                case .warning: mark = paint("!", "33")
                case .info: mark = paint("i", "36")
                case .pass: mark = paint("✓", "32")
                }
                out += "  \(mark) \(finding.message) [\(finding.rule)]\n"
                if let evidence = finding.evidence, finding.severity != .pass { out += "      \(evidence)\n" }
            }
            let verdict = report.passed(strict: strict) ? paint("ok", "32") : paint("FAILED", "31")
            let strictNote = strict && report.ok && report.warningCount > 0 ? " (--strict: warnings fail)" : ""
            out += "  \(verdict): \(count(report.errorCount, "error")), \(count(report.warningCount, "warning"))\(strictNote)\n\n"
        }
        let errors = reports.reduce(0) { $0 + $1.errorCount }
        let warnings = reports.reduce(0) { $0 + $1.warningCount }
        let failed = reports.count { !$0.passed(strict: strict) }
        out += "\(count(reports.count, "host")) checked: \(failed) failed, \(count(errors, "error")), \(count(warnings, "warning"))"
        out += strict && warnings > 0 ? " (--strict: warnings fail)\n" : "\n"
        return out
    }

    static func count(_ value: Int, _ noun: String) -> String { "\(value) \(noun)\(value == 1 ? "" : "s")" }

    /// `{"hosts":[{"host","address","ok","findings":[{"rule","severity","message","evidence"}]}],"ok","strict","errors":N,"warnings":N}`;
    /// `ok` is what the exit status says (with `strict`, warnings make it false).
    public static func json(_ reports: [HostReport], strict: Bool = false) -> [UInt8] {
        let hosts = reports.map { report -> JSONOutput in
            .object([
                ("host", .string(report.target.host)),
                ("url", .string(report.target.origin)),
                ("address", report.address.map(JSONOutput.string) ?? .null),
                ("ok", .bool(report.passed(strict: strict))),
                (
                    "findings",
                    .array(
                        report.findings.map { finding in
                            .object([
                                ("rule", .string(finding.rule)),
                                ("severity", .string(finding.severity.rawValue)),
                                ("message", .string(finding.message)),
                                ("evidence", finding.evidence.map(JSONOutput.string) ?? .null),
                            ])
                        }
                    )
                ),
            ])
        }
        let root = JSONOutput.object([
            ("hosts", .array(hosts)),
            ("ok", .bool(reports.allSatisfy { $0.passed(strict: strict) })),
            ("strict", .bool(strict)),
            ("errors", .int(reports.reduce(0) { $0 + $1.errorCount })),
            ("warnings", .int(reports.reduce(0) { $0 + $1.warningCount })),
        ])
        return JSONWriter.bytes(root, pretty: true) + [0x0A]
    }

    /// JUnit XML: one test suite per host, one test case per check. Errors are failures; warnings are
    /// failures too with `strict`, otherwise noted in the case's output.
    public static func junit(_ reports: [HostReport], strict: Bool) -> String {
        let suites = reports.map { report in
            // A case's name is its rule (numbered when a rule repeats), never its message: messages carry
            // dates and counts, and CI systems key a test's history on its name.
            var seen: [String: Int] = [:]
            return JUnit.Suite(
                name: report.target.origin,
                cases: report.findings.map { finding in
                    seen[finding.rule, default: 0] += 1
                    let occurrence = seen[finding.rule]!
                    let isFailure = finding.severity == .error || (strict && finding.severity == .warning)
                    return JUnit.Case(
                        classname: report.target.host,
                        name: occurrence == 1 ? finding.rule : "\(finding.rule) #\(occurrence)",
                        failure: isFailure
                            ? JUnit.Failure(message: finding.message, type: finding.rule, detail: finding.evidence ?? "") : nil,
                        output: "\(finding.severity.rawValue): \(finding.message)" + (finding.evidence.map { " — " + $0 } ?? "")
                    )
                }
            )
        }
        return JUnit.document(name: "aasa-server check", suites: suites)
    }

}
