import AASA

/// One result of checking a host: a stable rule id (the document's rules are `validate`'s own ids), a
/// severity, a one-line message that says how to fix it, and the evidence it rests on.
public struct CheckFinding: Sendable, Equatable {
    public enum Severity: String, Sendable, Comparable {
        case error, warning, info, pass

        var rank: Int {
            switch self {
            case .error: return 0
            case .warning: return 1
            case .info: return 2
            case .pass: return 3
            }
        }

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
    }

    public var rule: String
    public var severity: Severity
    public var message: String
    /// What was seen: a status line, a header, bytes, a certificate field.
    public var evidence: String?

    public init(_ severity: Severity, _ rule: String, _ message: String, evidence: String? = nil) {
        self.rule = rule
        self.severity = severity
        self.message = message
        self.evidence = evidence
    }

    /// A document finding from `validate`, as a check finding (the rule id stays the same).
    init(_ diagnostic: Diagnostic, subject: String) {
        var evidence: String?
        if let location = diagnostic.location { evidence = "\(subject):\(location.line):\(location.column)" }
        if let path = diagnostic.path, path != "$" { evidence = (evidence.map { $0 + " " } ?? "") + "at \(path)" }
        self.init(diagnostic.severity == .error ? .error : .warning, diagnostic.rule, diagnostic.message, evidence: evidence)
    }
}

/// Everything found about one host, in the order the checks ran.
public struct HostReport: Sendable {
    public var target: CheckTarget
    /// The address connected to (after DNS, `--resolve` or `--connect`), if any.
    public var address: String?
    public var findings: [CheckFinding]

    public var errorCount: Int { findings.count { $0.severity == .error } }
    public var warningCount: Int { findings.count { $0.severity == .warning } }
    public var ok: Bool { errorCount == 0 }

    /// What the exit status says of this host: errors fail it, and warnings too with `--strict`.
    public func passed(strict: Bool) -> Bool { errorCount == 0 && !(strict && warningCount > 0) }
}
