import Testing

@testable import AASA

/// `CheckedURL` reads bytes now (it is on every stored link's click); it must accept and split exactly
/// what the character-based reading it replaced did — it is the gate that keeps the server from being an
/// open redirect.
@Suite("Checked URLs")
struct CheckedURLTests {
    /// The reading before it was made byte-based, kept here as the reference.
    static func reference(_ text: String) -> (scheme: String, host: String, path: String)? {
        guard text.utf8.count <= 4096 else { return nil }
        let refused: Set<UInt8> = Set("\\<>\"`{}|^".utf8)
        for byte in text.utf8 where byte <= 0x20 || byte >= 0x7F || refused.contains(byte) { return nil }
        let lower = text.lowercased()
        let schemeLength = lower.hasPrefix("https://") ? 8 : lower.hasPrefix("http://") ? 7 : 0
        guard schemeLength > 0 else { return nil }
        let rest = text.dropFirst(schemeLength)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd].lowercased()
        guard !authority.contains("@") else { return nil }
        var hostText = Substring(authority)
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            let port = authority[authority.index(after: colon)...]
            guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber) else { return nil }
            hostText = authority[..<colon]
        }
        guard Self.referenceIsHostName(String(hostText)) || (hostText.hasPrefix("[") && hostText.hasSuffix("]")) else { return nil }
        let afterAuthority = rest[authorityEnd...]
        let pathEnd = afterAuthority.firstIndex { $0 == "?" || $0 == "#" } ?? afterAuthority.endIndex
        let pathPart = afterAuthority[..<pathEnd]
        return (String(lower.prefix(schemeLength - 3)), String(hostText), pathPart.isEmpty ? "/" : String(pathPart))
    }

    static func referenceIsHostName(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        for label in text.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty, label.utf8.count <= 63,
                label.utf8.allSatisfy({
                    ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x2D
                })
            else { return false }
        }
        return true
    }

    @Test("Host names: labels of 1 to 63, 253 in all, letters, digits and '-': the same verdict as the label-splitting reading")
    func hostNames() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "Z", "0", "-", ".", "..", "_", "é", " ", String(repeating: "x", count: 60), String(repeating: "y", count: 64)]
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(CheckedURL.isHostName(text) == Self.referenceIsHostName(text), "\(text)")
        }
        let long = Array(repeating: String(repeating: "a", count: 63), count: 4).joined(separator: ".")
        #expect(!CheckedURL.isHostName(long) && CheckedURL.isHostName(String(long.dropFirst(3))), "253 bytes at most")
    }

    @Test(
        "50,000 URL-like strings (schemes in any case, ports, user info, brackets, control and refused bytes): the same verdict and parts"
    )
    func sameAsReference() {
        var generator = SystemRandomNumberGenerator()
        let pieces = [
            "https://", "http://", "HTTPS://", "Http://", "ftp://", "example.com", "EXAMPLE.com", "a-b.c", "[::1]", ":", "443", "8080",
            "123456", "@", "user", "/", "?", "#", "q=1", "&", "%2F", "\\", "{", "}", " ", "\t", "é", "..", "-", "x", "|", "^", "`",
        ]
        var accepted = 0
        let schemes = ["https://", "http://", "HTTPS://", "Http://", "ftp://", "https:/"]
        let hosts = ["example.com", "EXAMPLE.com", "a-b.c", "[::1]", "x", "..", "-a.com", "é.com", ""]
        for _ in 0..<50_000 {
            // Mostly a scheme and a host first, so the later checks are reached as often as the early ones.
            let start =
                Bool.random(using: &generator) ? schemes.randomElement(using: &generator)! + hosts.randomElement(using: &generator)! : ""
            let text = start + (0..<Int.random(in: 0...5, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let read = CheckedURL(text)
            let expected = Self.reference(text)
            #expect(read.map { [$0.scheme, $0.host, $0.path] } == expected.map { [$0.scheme, $0.host, $0.path] }, "\(text)")
            #expect(read.map(\.text) == expected.map { _ in text })
            if read != nil { accepted += 1 }
        }
        #expect(accepted > 2_000, "the strings reach the accepting paths too (\(accepted))")
    }
}
