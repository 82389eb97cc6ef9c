import Posix

/// Lifecycle and error lines on stderr (the access log owns stdout). One line each, prefixed, so
/// supervisors and tests can match them.
enum Log {
    static func info(_ message: String) { write("aasa-server: \(message)\n") }
    static func error(_ message: String) { write("aasa-server: error: \(message)\n") }

    private static func write(_ line: String) { Posix.writeAll(2, Array(line.utf8)) }
}
