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

    /// Unix seconds of a UTC calendar time (days-from-civil, the inverse of ``init(unixSeconds:)``).
    public static func unixSeconds(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// An RFC 3339 timestamp (`2026-12-01T20:00:00Z`, `…T20:00:00.123+01:00`) in Unix seconds; nil if
    /// malformed. Fractions are dropped.
    public static func parseRFC3339(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard ASCII.isDigit(bytes[index]) else { return nil }
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] | 0x20 == UInt8(ascii: "t"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), (1...12).contains(month), (1...31).contains(day), hour < 24,
            minute < 60, second <= 60
        else { return nil }
        var index = 19
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, ASCII.isDigit(bytes[index]) { index += 1 }
        }
        guard index < bytes.count else { return nil }
        var offset = 0
        if bytes[index] | 0x20 == UInt8(ascii: "z") {
            guard index + 1 == bytes.count else { return nil }
        } else {
            guard index + 6 == bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"),
                bytes[index + 3] == UInt8(ascii: ":"), let hours = number((index + 1)..<(index + 3)),
                let minutes = number((index + 4)..<(index + 6))
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
        }
        return unixSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second) - offset
    }

    public static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
