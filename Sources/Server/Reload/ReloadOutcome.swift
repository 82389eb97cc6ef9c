import AASA

/// What a reload did, as a value: logged as one line, answered to `POST /reload` as JSON, counted in
/// metrics. Decisions (the HTTP status, the metrics) read the case, never the text.
enum ReloadOutcome: Sendable {
    struct Applied: Sendable {
        var generation: Int
        /// From reading the first file to the new snapshot in force.
        var milliseconds: Int64
        var changes: SnapshotChanges
        var certificatesReplaced: Bool
        /// Settings that changed but need new sockets or threads: they wait for a restart.
        var needsRestart: [String]
    }

    case reloaded(Applied)
    case rejected(RejectedReload)

    var isSuccess: Bool {
        if case .reloaded = self { return true }
        return false
    }

    /// The log line, `trigger` being what asked for the reload ("SIGHUP", "file change", "POST /reload").
    func logLine(trigger: String) -> String {
        switch self {
        case .reloaded(let applied):
            var line = "reloaded (\(trigger)): generation \(applied.generation) in \(applied.milliseconds) ms; " + applied.changes.summary
            if applied.certificatesReplaced { line += "; certificates replaced" }
            if !applied.needsRestart.isEmpty { line += "; needs a restart to apply: " + applied.needsRestart.joined(separator: ", ") }
            return line
        case .rejected(let refused):
            // The errors follow, one line each (Log.finding); this line says what happened.
            let count = refused.errors.count
            return "reload (\(trigger)) rejected, still serving generation \(refused.generation): "
                + "\(count) error\(count == 1 ? "" : "s")\(count == 10 ? " (the first ten; validate --config lists all)" : "")"
        }
    }

    var json: String {
        switch self {
        case .reloaded(let applied):
            return "{\"result\":\"reloaded\",\"generation\":\(applied.generation),\"milliseconds\":\(applied.milliseconds),"
                + "\"changes\":\(JSONText.quoted(applied.changes.summary)),\"certificatesReplaced\":\(applied.certificatesReplaced),"
                + "\"needsRestart\":[\(applied.needsRestart.map(JSONText.quoted).joined(separator: ","))]}"
        case .rejected(let refused):
            return "{\"result\":\"rejected\",\"generation\":\(refused.generation),"
                + "\"errors\":[\(refused.errors.map { JSONText.quoted($0.description) }.joined(separator: ","))]}"
        }
    }
}
