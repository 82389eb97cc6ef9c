import AASA

/// Prints findings the way clang and swift-format do, with the offending line and a caret, or as JSON.
struct DiagnosticPrinter {
    var colour: Bool
    /// Source text by file name, for quoting the offending line.
    var sources: [String: [UInt8]] = [:]

    func human(_ diagnostic: Diagnostic) -> String {
        let severity = diagnostic.severity.rawValue
        let styledSeverity =
            colour ? (diagnostic.severity == .error ? "\u{1B}[1;31m\(severity)\u{1B}[0m" : "\u{1B}[1;33m\(severity)\u{1B}[0m")
            : severity
        var position = diagnostic.file ?? "<input>"
        if let location = diagnostic.location { position += ":\(location.line):\(location.column)" }
        var text = "\(position): \(styledSeverity): \(diagnostic.message) [\(diagnostic.rule)]"
        if let path = diagnostic.path { text += "\n    at \(path)" }
        if let location = diagnostic.location, let file = diagnostic.file, let source = sources[file],
            let line = sourceLine(source, line: location.line)
        {
            let shown = line.split(separator: "\t", omittingEmptySubsequences: false).joined(separator: " ")
            if shown.count <= 160 {
                text += "\n    \(shown)\n    " + String(repeating: " ", count: max(0, location.column - 1)) + "^"
            }
        }
        return text
    }

    private func sourceLine(_ source: [UInt8], line: Int) -> String? {
        var current = 1
        var start = 0
        for (index, byte) in source.enumerated() where byte == 0x0A {
            if current == line { return String(decoding: source[start..<index], as: UTF8.self).trimmingTrailingCR() }
            current += 1
            start = index + 1
        }
        return current == line && start < source.count
            ? String(decoding: source[start...], as: UTF8.self).trimmingTrailingCR() : nil
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

    static func jsonReport(_ diagnostics: [Diagnostic]) -> JSONOutput {
        .object([
            ("errors", .int(diagnostics.errorCount)),
            ("warnings", .int(diagnostics.warningCount)),
            ("findings", .array(diagnostics.map(json))),
        ])
    }
}

extension String {
    fileprivate func trimmingTrailingCR() -> String { hasSuffix("\r") ? String(dropLast()) : self }
}
