public import AASA
import Posix
import Synchronization

/// Lifecycle and error lines on stderr (the access log owns stdout). Every line is one line: a config
/// finding is its `file:line:column: severity: message [rule]` summary, never a caret excerpt (those are
/// for the terminal, in the CLI). With `server.logFormat: "json"` each line is a JSON object instead.
public enum Log {
    /// The format in force; set from the config at start and on every reload.
    private static let json = Atomic<Bool>(false)

    public static func configure(_ format: ServerSettings.LogFormat) {
        json.store(format == .json, ordering: .relaxed)
    }

    public static func info(_ message: String) { write(level: "info", message) }
    public static func warning(_ message: String) { write(level: "warning", message) }
    public static func error(_ message: String) { write(level: "error", message) }

    /// A config finding, with its place as fields in JSON.
    public static func finding(_ finding: Diagnostic) {
        let level = finding.severity == .error ? "error" : "warning"
        guard json.load(ordering: .relaxed) else {
            Posix.writeAll(2, Array("aasa-server: \(finding.description)\n".utf8))
            return
        }
        var fields: [(String, String)] = []
        if let file = finding.file { fields.append(("file", JSONText.quoted(file))) }
        if let location = finding.location {
            fields.append(("line", String(location.line)))
            fields.append(("column", String(location.column)))
        }
        fields.append(("rule", JSONText.quoted(finding.rule)))
        if let path = finding.path { fields.append(("path", JSONText.quoted(path))) }
        writeJSON(level: level, finding.message, fields)
    }

    private static func write(level: String, _ message: String) {
        guard json.load(ordering: .relaxed) else {
            let prefix = level == "info" ? "aasa-server: " : "aasa-server: \(level): "
            Posix.writeAll(2, Array((prefix + oneLine(message) + "\n").utf8))
            return
        }
        writeJSON(level: level, message, [])
    }

    private static func writeJSON(level: String, _ message: String, _ fields: [(String, String)]) {
        let now = Posix.unixTime()
        let milliseconds = Int(now * 1000) % 1000
        var line = "{\"time\":\"\(AccessLog.isoTimestamp(Int(now))).\(MetricsRenderer.pad(milliseconds, 3))Z\""
        line += ",\"level\":\"\(level)\",\"msg\":\(JSONText.quoted(message))"
        for (key, value) in fields { line += ",\"\(key)\":\(value)" }
        Posix.writeAll(2, Array((line + "}\n").utf8))
    }

    /// A message that would span lines (an error quoting input) is kept on one.
    private static func oneLine(_ message: String) -> String {
        guard message.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else { return message }
        return String(message.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
    }
}
