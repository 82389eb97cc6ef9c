import Testing

@testable import AASA

@Suite("Pattern coverage: does one pattern match everything another does")
struct PatternCoverageTests {
    @Test("wildcards cover what they should; a literal difference before any wildcard settles it either way")
    func covers() {
        #expect(PatternCoverage.covers("/platform/*", "/platform/login"))
        #expect(PatternCoverage.covers("/*", "/admin/?x*"))
        #expect(PatternCoverage.covers("/p?/*", "/pa/b"))
        #expect(!PatternCoverage.covers("/admin/*", "/product/0/*"), "differs at the second character")
        #expect(!PatternCoverage.covers("/platform/login", "/platform/*"), "a literal never covers a wildcard")
        #expect(!PatternCoverage.covers("/a/x", "/a/y"))
        #expect(PatternCoverage.covers("/Platform/*", "/platform/login", caseSensitive: false))
        #expect(!PatternCoverage.covers("/Platform/*", "/platform/login", caseSensitive: true))
        #expect(PatternCoverage.covers("/é/*", "/é/x"), "beyond ASCII the table decides")
        #expect(!PatternCoverage.covers("/$(lang)/*", "/en/x"), "substitution variables are never said to cover")
    }

    @Test("catch-all paths and wildcard-only patterns, decided from the first byte where it settles it")
    func catchAlls() {
        for pattern in ["*", "***", "/*"] { #expect(AASAValidator.isPathCatchAll(pattern), "\(pattern)") }
        for pattern in ["", "*x", "x*", "/**", "/", "/*x", "**/"] { #expect(!AASAValidator.isPathCatchAll(pattern), "\(pattern)") }
        #expect(AASAValidator.isPathCatchAll(nil) && AASAValidator.isWildcardOnly(nil))
        for pattern in ["*", "**"] { #expect(AASAValidator.isWildcardOnly(pattern)) }
        for pattern in ["", "/*", "*?", "?"] { #expect(!AASAValidator.isWildcardOnly(pattern), "\(pattern)") }
    }
}
