import AASA
import HTTP1
import Posix
import Support

/// One JSON line per request on stdout, buffered by each loop and written once per loop iteration.
struct AccessLog {
    struct Entry {
        var client: String
        var host: String
        var method: String
        var target: String
        var status: Int
        var bytes: Int
        var userAgent: String
        var durationMicros: Int64
    }

    private var buffer: [UInt8] = []
    private var second = -1
    private var isoSecond = ""

    mutating func append(_ entry: Entry, unixTime: Double) {
        let wholeSecond = Int(unixTime)
        if wholeSecond != second {
            second = wholeSecond
            isoSecond = Self.isoTimestamp(wholeSecond)
        }
        let milliseconds = Int(unixTime * 1000) % 1000
        let line =
            "{\"time\":\"\(isoSecond).\(MetricsRenderer.pad(milliseconds, 3))Z\",\"client\":\(JSONText.quoted(entry.client))"
            + ",\"host\":\(JSONText.quoted(entry.host)),\"method\":\(JSONText.quoted(entry.method)),\"path\":\(JSONText.quoted(entry.target))"
            + ",\"status\":\(entry.status),\"bytes\":\(entry.bytes),\"userAgent\":\(JSONText.quoted(entry.userAgent))"
            + ",\"durationMicros\":\(entry.durationMicros)}\n"
        buffer.append(contentsOf: line.utf8)
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        Posix.writeAll(1, buffer)
        buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
    }

    /// `2026-11-30T13:00:00` for a Unix second (UTC).
    static func isoTimestamp(_ second: Int) -> String { CivilTime(unixSeconds: second).isoSecond }
}
