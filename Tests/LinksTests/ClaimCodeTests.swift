import Foundation
import Support
import Testing

@testable import Links

/// Claim codes of deferred deep links: signed with the store's key, read back exactly, refused when made
/// up, from another key or domain, damaged, or too old.
@Suite("Claim codes")
struct ClaimCodeTests {
    static let key = (0..<32).map { UInt8($0 * 7 % 256) }
    static let code = ClaimCode(domain: "go.example.com", suffix: "spring-sale", issued: 29_400_000, nonce: [1, 2, 3, 4, 5, 6, 7, 8])

    @Test("Written and read back; the form is SUFFIX.TOKEN, 32 base64url characters, the URL on the reserved path")
    func roundTrip() throws {
        let text = Self.code.text(key: Self.key)
        #expect(text.range(of: #"^spring-sale\.[A-Za-z0-9_-]{32}$"#, options: .regularExpression) != nil, "\(text)")
        #expect(Self.code.url(key: Self.key) == "https://go.example.com/_/c/" + text)
        #expect(try ClaimCode.read(text, domain: "go.example.com", key: Self.key, nowMinutes: 29_400_000 + 60).get() == Self.code)
        let other = ClaimCode(domain: "go.example.com", suffix: "spring-sale", issued: 29_400_000, nonce: [1, 2, 3, 4, 5, 6, 7, 9])
        #expect(other.text(key: Self.key) != text, "another nonce, another code")
    }

    @Test("Refused: another key, another domain, another suffix, any byte changed, a bad form; too old or from the future")
    func refusals() {
        let text = Self.code.text(key: Self.key)
        let now: UInt32 = 29_400_000 + 10
        func read(_ text: String, domain: String = "go.example.com", key: [UInt8] = Self.key, now: UInt32 = now) -> ClaimCode.Refusal? {
            if case .failure(let refusal) = ClaimCode.read(text, domain: domain, key: key, nowMinutes: now) { return refusal }
            return nil
        }
        #expect(read(text, key: Self.key.map { $0 ^ 1 }) == .forged)
        #expect(read(text, domain: "evil.example") == .forged)
        #expect(read("spring." + text.split(separator: ".")[1]) == .forged, "a code names its link")
        let token = Array(text.split(separator: ".")[1].utf8)
        for index in token.indices {
            var changed = token
            changed[index] = changed[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            let refusal = read("spring-sale." + String(decoding: changed, as: UTF8.self))
            #expect(refusal == .forged || refusal == .malformed, "character \(index)")
        }
        for bad in [
            "", "spring-sale", "spring-sale.", ".abc", "spring-sale.abc", "_x." + token.map { String(UnicodeScalar($0)) }.joined(), "a/b.x",
        ] {
            #expect(read(bad) == .malformed, "\(bad)")
        }
        #expect(read(text, now: 29_400_000 + ClaimCode.lifetimeMinutes) == nil, "seven days is still good")
        #expect(read(text, now: 29_400_000 + ClaimCode.lifetimeMinutes + 1) == .expired)
        #expect(read(text, now: 29_400_000 - 1) == .expired, "issued in the future")
        #expect((try? ClaimCode.signed(text, domain: "go.example.com", key: Self.key).get()) == Self.code, "signed ignores age")
    }

    @Test("HMAC-SHA-256: RFC 4231's test cases 1, 2, 6 and 7 (short, text, and keys longer than a block)")
    func hmac() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
        #expect(
            hex(HMAC.sha256(key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        )
        #expect(
            hex(HMAC.sha256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        )
        let long = [UInt8](repeating: 0xAA, count: 131)
        #expect(
            hex(HMAC.sha256(key: long, message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        )
        let message =
            "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
        #expect(
            hex(HMAC.sha256(key: long, message: Array(message.utf8))) == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        )
        #expect(HMAC.equal([1, 2, 3], [1, 2, 3]) && !HMAC.equal([1, 2, 3], [1, 2, 4]) && !HMAC.equal([1, 2], [1, 2, 3]))
    }
}
