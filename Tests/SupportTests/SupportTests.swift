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

@Suite("SHA-256 and standard Base64")
struct DigestTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    // Digests from Python's hashlib (OpenSSL's) of bytes (i * 7 + 3) % 256: lengths on both sides of
    // each padding boundary (55/56 bytes: the length fits in the block or not; 64: a whole block).
    @Test("FIPS 180-4's \"abc\" and messages on both sides of every padding boundary")
    func knownDigests() {
        #expect(Self.hex(SHA256.digest(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let expected: [Int: String] = [
            0: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            3: "6ab0dba1f4f1dfbb37b4f9eeb092c09fca4900ad32bdcd147d8dde35d6c87c35",
            55: "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b",
            56: "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27",
            63: "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055",
            64: "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241",
            65: "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e",
            119: "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e",
            1000: "1e9bc38cbf860b9ec31918b065f9b52476c549a782e0e7990bed8ce3868d2371",
        ]
        for (length, digest) in expected {
            let message = (0..<length).map { UInt8(($0 * 7 + 3) % 256) }
            #expect(Self.hex(SHA256.digest(message)) == digest, "\(length) bytes")
        }
    }

    @Test("Base64 pads to four characters and uses + and /; a CSP hash source as browsers compute it")
    func standardBase64() {
        #expect(["", "f", "fo", "foo", "foob"].map { Base64.encode(Array($0.utf8)) } == ["", "Zg==", "Zm8=", "Zm9v", "Zm9vYg=="])
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
        #expect(Base64.encode(SHA256.digest(Array("body{color:red}".utf8))) == "FcQqt3aNlV7AZnGV4zkQRVeCeJOxbMPnQSx258L803E=")
    }

    @Test("A token bucket: a burst at once, then the rate; the wait until the next token; a new rate keeps what is held")
    func tokenBucket() {
        var bucket = TokenBucket(rate: 2, burst: 4)
        #expect((0..<4).allSatisfy { _ in bucket.take(now: 100) == nil }, "the burst")
        #expect(bucket.take(now: 100) == 0.5, "half a second to the next token at 2 a second")
        #expect(bucket.take(now: 100.5) == nil && bucket.take(now: 100.5) != nil)
        #expect(bucket.take(now: 200) == nil, "a quiet spell refills up to the burst, not beyond")
        #expect((0..<3).allSatisfy { _ in bucket.take(now: 200) == nil } && bucket.take(now: 200) != nil)
        #expect(bucket.take(now: 150) != nil, "a clock that goes back adds nothing")
        var slower = TokenBucket(rate: 10, burst: 100)
        slower.set(rate: 1, burst: 2)
        #expect(slower.take(now: 0) == nil && slower.take(now: 0) == nil && slower.take(now: 0) == 1)
    }
}
