import Support
import Testing

@Suite("Calendar fields from Unix time")
struct CivilTimeTests {
    @Test("epoch, a leap day, a year's last second and a date before 1970")
    func knownDates() {
        let epoch = CivilTime(unixSeconds: 0)
        #expect((epoch.year, epoch.month, epoch.day, epoch.weekday) == (1970, 1, 1, 4))
        #expect(CivilTime(unixSeconds: 951_782_400).isoDay == "2000-02-29")
        let last = CivilTime(unixSeconds: 1_798_761_599)
        #expect(last.isoSecond == "2026-12-31T23:59:59")
        #expect(last.weekday == 4)
        #expect(CivilTime(unixSeconds: -1).isoSecond == "1969-12-31T23:59:59")
        #expect(CivilTime(unixSeconds: 784_111_777).weekday == 0)
    }

    @Test("consecutive days over 400 years step by one day and one weekday")
    func daysAreContinuous() {
        var previous = CivilTime(unixSeconds: 0)
        for day in 1...(146_097) {
            let next = CivilTime(unixSeconds: day * 86_400)
            #expect(next.weekday == (previous.weekday + 1) % 7)
            if next.month == previous.month {
                #expect(next.day == previous.day + 1)
            } else {
                #expect(next.day == 1 && (next.month == previous.month % 12 + 1))
            }
            previous = next
        }
        #expect(previous.year == 2370)
    }
}

@Suite("One-result-per-task slots")
struct TaskSlotsTests {
    @Test("slots written out of order come back in index order, empty ones left out")
    func filledInOrder() {
        let slots = TaskSlots<String>(count: 4)
        slots[3] = "d"
        slots[0] = "a"
        slots[2] = "c"
        #expect(slots.filled() == ["a", "c", "d"])
        #expect(slots[1] == nil && slots.count == 4)
    }
}

@Suite("Byte classes, trims and search")
struct TextHelperTests {
    @Test("hex digits in both cases, nothing else")
    func hexDigits() {
        #expect(ASCII.hexValue(UInt8(ascii: "0")) == 0)
        #expect(ASCII.hexValue(UInt8(ascii: "f")) == 15)
        #expect(ASCII.hexValue(UInt8(ascii: "F")) == 15)
        #expect(ASCII.hexValue(UInt8(ascii: "g")) == nil)
        #expect(ASCII.hex(255, width: 4) == "00FF")
    }

    @Test("trims remove only what they name")
    func trims() {
        #expect(" \tx y\t ".trimmingSpacesAndTabs() == "x y")
        #expect("\r\n x \n".trimmingWhitespace() == "x")
        #expect("\"quoted\"".trimming("\"") == "quoted")
        #expect(Array(" \tab\r\n".utf8)[...].trimmingASCIIWhitespace().elementsEqual("ab".utf8))
    }

    @Test("replace-all replaces every occurrence, including adjacent ones")
    func replaceAll() {
        #expect("a--b--".replacingAll("--", with: "+") == "a+b+")
        #expect("aaa".replacingAll("a", with: "aa") == "aaaaaa")
    }
}
