import Support

/// IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`, from Unix seconds, without
/// DateFormatter (pure, allocation-light; the server caches the result per second).
public enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func format(unixSeconds: Int) -> String {
        let time = CivilTime(unixSeconds: unixSeconds)
        return "\(days[time.weekday]), \(CivilTime.twoDigits(time.day)) \(months[time.month - 1]) \(time.year) \(time.isoTimeOfDay) GMT"
    }

    /// Unix seconds of an IMF-fixdate (`Retry-After`, RFC 9110 §10.2.3); nil for anything else.
    public static func parse(_ text: String) -> Int? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", parts[0].hasSuffix(","), let day = Int(parts[1]),
            let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3 else { return nil }
        return CivilTime.unixSeconds(year: year, month: month + 1, day: day, hour: clock[0], minute: clock[1], second: clock[2])
    }

    /// `Date: <IMF-fixdate>\r\n`, the header line every response carries (RFC 9110 §6.6.1).
    public static func line(unixSeconds: Int) -> [UInt8] {
        Array("Date: \(format(unixSeconds: unixSeconds))\r\n".utf8)
    }
}
