import AASA

/// Prints findings the way clang and swift-format do, with the offending line and a caret, or as JSON.
struct DiagnosticPrinter {
    var colour: Bool
    /// Source text by file name, for quoting the offending line.
    var sources: [String: [UInt8]] = [:]
    /// Line start offsets per file, computed once: looking lines up by scanning made printing 5,000
    /// findings of a large config take seconds.
    private let lineIndex = LineIndex()

    /// After this many findings of one rule, the rest are counted in one line (`--json` lists all).
    static let perRuleLimit = 10

    init(colour: Bool, sources: [String: [UInt8]] = [:]) {
        self.colour = colour
        self.sources = sources
    }

    /// Prints findings in reading order, summarising a rule that repeats more than ``perRuleLimit`` times.
    func print(_ findings: [Diagnostic], to console: any Console) {
        var shown: [String: Int] = [:]
        for finding in findings {
            shown[finding.rule, default: 0] += 1
            if shown[finding.rule, default: 0] <= Self.perRuleLimit { console.err(human(finding) + "\n") }
        }
        for (rule, count) in shown.sorted(by: { $0.key < $1.key }) where count > Self.perRuleLimit {
            console.err("… and \(count - Self.perRuleLimit) more [\(rule)] findings (use --json to list all)\n")
        }
    }

    func human(_ diagnostic: Diagnostic) -> String {
        let severity = diagnostic.severity.rawValue
        let styledSeverity =
            colour
            ? (diagnostic.severity == .error ? "\u{1B}[1;31m\(severity)\u{1B}[0m" : "\u{1B}[1;33m\(severity)\u{1B}[0m")
            : severity
        var position = diagnostic.file ?? "<input>"
        if let location = diagnostic.location { position += ":\(location.line):\(location.column)" }
        var text = "\(position): \(styledSeverity): \(diagnostic.message) [\(diagnostic.rule)]"
        if let path = diagnostic.path { text += "\n    at \(path)" }
        if let location = diagnostic.location, let file = diagnostic.file, let source = sources[file],
            let line = sourceLine(source, file: file, line: location.line)
        {
            let shown = line.split(separator: "\t", omittingEmptySubsequences: false).joined(separator: " ")
            if shown.count <= 160 {
                text += "\n    \(shown)\n    " + String(repeating: " ", count: max(0, location.column - 1)) + "^"
            }
        }
        return text
    }

    private func sourceLine(_ source: [UInt8], file: String, line: Int) -> String? {
        let starts = lineIndex.starts(for: file, source)
        guard line >= 1, line <= starts.count else { return nil }
        let start = starts[line - 1]
        let end = line < starts.count ? starts[line] - 1 : source.count
        guard end - start <= 400 else { return nil }  // a minified line is not worth quoting
        return String(decoding: source[start..<max(start, end)], as: UTF8.self).trimmingTrailingCR()
    }

    static func json(_ diagnostic: Diagnostic) -> JSONOutput {
        .object([
            ("rule", .string(diagnostic.rule)),
            ("severity", .string(diagnostic.severity.rawValue)),
            ("file", diagnostic.file.map(JSONOutput.string) ?? .null),
            ("line", diagnostic.location.map { .int($0.line) } ?? .null),
            ("column", diagnostic.location.map { .int($0.column) } ?? .null),
            ("path", diagnostic.path.map(JSONOutput.string) ?? .null),
            ("message", .string(diagnostic.message)),
        ])
    }

    /// `ok` is what the exit status says: no errors, and with `strict` no warnings either.
    static func jsonReport(_ diagnostics: [Diagnostic], strict: Bool = false) -> JSONOutput {
        .object([
            ("ok", .bool(!diagnostics.hasErrors && !(strict && diagnostics.warningCount > 0))),
            ("strict", .bool(strict)),
            ("errors", .int(diagnostics.errorCount)),
            ("warnings", .int(diagnostics.warningCount)),
            ("findings", .array(diagnostics.map(json))),
        ])
    }
}

extension String {
    fileprivate func trimmingTrailingCR() -> String { hasSuffix("\r") ? String(dropLast()) : self }
}

/// Offsets where each line starts, per file (a class so the printer stays a value type).
final class LineIndex {
    private var cache: [String: [Int]] = [:]

    func starts(for file: String, _ source: [UInt8]) -> [Int] {
        if let known = cache[file] { return known }
        var starts = [0]
        for (index, byte) in source.enumerated() where byte == 0x0A { starts.append(index + 1) }
        cache[file] = starts
        return starts
    }
}
