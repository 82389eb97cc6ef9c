/// A Unix time broken into its UTC calendar fields, without Foundation (pure; the server formats a
/// date each second and the logs one per line). Every date format the project writes starts here, so
/// none of them takes another's text apart again.
public struct CivilTime: Equatable, Sendable {
    public var year: Int
    /// 1...12
    public var month: Int
    /// 1...31
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int
    /// 0 = Sunday ... 6 = Saturday
    public var weekday: Int

    public init(unixSeconds: Int) {
        let secondsOfDay = ((unixSeconds % 86_400) + 86_400) % 86_400
        let dayNumber = (unixSeconds - secondsOfDay) / 86_400
        // Civil-from-days (Howard Hinnant's algorithm), valid for the proleptic Gregorian calendar.
        let shifted = dayNumber + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = secondsOfDay / 3600
        minute = secondsOfDay / 60 % 60
        second = secondsOfDay % 60
        // 1970-01-01 was a Thursday.
        weekday = ((dayNumber % 7) + 7 + 4) % 7
    }

    /// `2026-11-30`
    public var isoDay: String { "\(year)-\(Self.twoDigits(month))-\(Self.twoDigits(day))" }
    /// `13:05:09`
    public var isoTimeOfDay: String { "\(Self.twoDigits(hour)):\(Self.twoDigits(minute)):\(Self.twoDigits(second))" }
    /// `2026-11-30T13:05:09` (no zone: callers add `Z` or a fraction first)
    public var isoSecond: String { isoDay + "T" + isoTimeOfDay }

    public static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
