import AASA

/// The three ways `check` reports: for people, for programs (`--json`), for CI dashboards (`--junit`).
public enum CheckReport {
    public static func human(_ reports: [HostReport], colour: Bool, verbose: Bool = true) -> String {
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
            let verdict = report.ok ? paint("ok", "32") : paint("FAILED", "31")
            out += "  \(verdict): \(count(report.errorCount, "error")), \(count(report.warningCount, "warning"))\n\n"
        }
        let errors = reports.reduce(0) { $0 + $1.errorCount }
        let warnings = reports.reduce(0) { $0 + $1.warningCount }
        let failed = reports.count { !$0.ok }
        out += "\(count(reports.count, "host")) checked: \(failed) failed, \(count(errors, "error")), \(count(warnings, "warning"))\n"
        return out
    }

    static func count(_ value: Int, _ noun: String) -> String { "\(value) \(noun)\(value == 1 ? "" : "s")" }

    /// `{"hosts":[{"host","address","ok","findings":[{"rule","severity","message","evidence"}]}],"errors":N,"warnings":N}`.
    public static func json(_ reports: [HostReport]) -> [UInt8] {
        let hosts = reports.map { report -> JSONOutput in
            .object([
                ("host", .string(report.target.host)),
                ("url", .string(report.target.origin)),
                ("address", report.address.map(JSONOutput.string) ?? .null),
                ("ok", .bool(report.ok)),
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
            ("errors", .int(reports.reduce(0) { $0 + $1.errorCount })),
            ("warnings", .int(reports.reduce(0) { $0 + $1.warningCount })),
        ])
        return JSONWriter.bytes(root, pretty: true) + [0x0A]
    }

    /// JUnit XML: one test suite per host, one test case per check. Errors are failures; warnings are
    /// failures too with `strict`, otherwise noted in the case's output.
    public static func junit(_ reports: [HostReport], strict: Bool) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        let total = reports.reduce(0) { $0 + $1.findings.count }
        let failures = reports.reduce(0) { $0 + $1.errorCount + (strict ? $1.warningCount : 0) }
        out += "<testsuites name=\"aasa-server check\" tests=\"\(total)\" failures=\"\(failures)\">\n"
        for report in reports {
            let failed = report.errorCount + (strict ? report.warningCount : 0)
            out += "  <testsuite name=\"\(xml(report.target.origin))\" tests=\"\(report.findings.count)\" failures=\"\(failed)\">\n"
            for finding in report.findings {
                out += "    <testcase classname=\"\(xml(report.target.host))\" name=\"\(xml(finding.rule)): \(xml(finding.message))\">\n"
                let isFailure = finding.severity == .error || (strict && finding.severity == .warning)
                if isFailure {
                    out +=
                        "      <failure message=\"\(xml(finding.message))\" type=\"\(xml(finding.rule))\">\(xml(finding.evidence ?? ""))</failure>\n"
                } else if finding.severity != .pass {
                    out +=
                        "      <system-out>\(finding.severity.rawValue): \(xml(finding.message))\(finding.evidence.map { " — " + xml($0) } ?? "")</system-out>\n"
                }
                out += "    </testcase>\n"
            }
            out += "  </testsuite>\n"
        }
        return out + "</testsuites>\n"
    }

    static func xml(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // XML 1.0 allows no control characters but tab, LF and CR.
                if scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r" {
                    out += "?"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
