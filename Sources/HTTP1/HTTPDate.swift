/// IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`, from Unix seconds, without
/// DateFormatter (pure, allocation-light; the server caches the result per second).
public enum HTTPDate {
    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func format(unixSeconds: Int) -> String {
        let secondsOfDay = ((unixSeconds % 86_400) + 86_400) % 86_400
        let dayNumber = (unixSeconds - secondsOfDay) / 86_400
        // Civil-from-days (Howard Hinnant's algorithm), valid for the proleptic Gregorian calendar.
        let z = dayNumber + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        var year = yearOfEra + era * 400
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        if month <= 2 { year += 1 }
        let weekday = days[((dayNumber % 7) + 7) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(secondsOfDay / 3600)):"
            + "\(two(secondsOfDay / 60 % 60)):\(two(secondsOfDay % 60)) GMT"
    }

    /// `Date: <IMF-fixdate>\r\n`, the header line every response carries (RFC 9110 §6.6.1).
    public static func line(unixSeconds: Int) -> [UInt8] {
        Array("Date: \(format(unixSeconds: unixSeconds))\r\n".utf8)
    }
}
