import Links
import Testing

@testable import Server

/// Which stored link's console page a path asks for: two segments, decoded; days bounded.
@Suite("Console: the link page's address")
struct ConsoleLinkPageTests {
    @Test("HOST/SUFFIX decoded (the host in lower case), days from 1 to 365 or 30; anything else is no link page")
    func addresses() {
        #expect(
            ConsoleLinkPage.call(path: "/console/link/Go.Example.com/Spring", query: "")
                == .consolePage(domain: "go.example.com", suffix: "Spring", days: 30)
        )
        #expect(
            ConsoleLinkPage.call(path: "/console/link/go.example.com/a%2Fb", query: "days=7")
                == .consolePage(domain: "go.example.com", suffix: "a/b", days: 7)
        )
        for days in ["0", "366", "-1", "x", ""] {
            #expect(
                ConsoleLinkPage.call(path: "/console/link/go.example.com/s", query: "days=\(days)")
                    == .consolePage(domain: "go.example.com", suffix: "s", days: 30)
            )
        }
        for path in [
            "/console/link/", "/console/link/go.example.com", "/console/link/go.example.com/", "/console/link//s", "/console/link/a/b/c",
            "/console/host/a",
        ] {
            #expect(ConsoleLinkPage.call(path: path, query: "") == nil, "\(path)")
        }
    }
}
