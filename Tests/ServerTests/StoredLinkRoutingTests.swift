import AASA
import Foundation
import HTTP1
import Links
import TestSupport
import Testing

@testable import Server

/// Stored short links answered by the router: routed as an FDL long link with their parameters would be,
/// per visitor; 410 when disabled; a config rule naming the same path exactly wins, a wildcard one does
/// not; a change to the table is never hidden by a cached answer.
@Suite("Stored short links routed per visitor")
struct StoredLinkRoutingTests {
    static let config = #"""
        {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 123456789,
                                         "android": {"package": "com.example.shop", "sha256": ["\#(LinkServingTests.fingerprint)"]}}},
         "sites": [{"hosts": ["go.example.com", "links.example.com"], "links": {"app": "shop", "openHost": "open.example.com", "allow": ["example.com"],
                    "rules": [{"/": "/fixed", "web": "https://example.com/from-config"}, {"/": "/*", "web": "https://example.com{path}"}]}},
                   {"hosts": ["open.example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/*"}]}]}}]}
        """#

    static func link(_ suffix: String, _ parameters: [String: String], state: StoredLink.State = .active, revision: Int64 = 1) -> StoredLink
    {
        StoredLink(domain: "go.example.com", suffix: suffix, parameters: parameters, state: state, revision: revision)
    }

    static func answer(
        _ router: RouterHarness,
        _ target: String,
        agent: String,
        host: String = "go.example.com",
        table: ShortLinkTable,
        cache: LinkAnswerCache? = nil
    ) -> LinkAnswer? {
        LinkAnswerCacheTests.answer(
            router.route(LinkAnswerCacheTests.request(target, host: host, agent: agent), linkAnswers: cache, storedLinks: table)
        )
    }

    static func body(_ answer: LinkAnswer?) -> String { String(decoding: answer?.response.body ?? [], as: UTF8.self) }

    static func location(_ answer: LinkAnswer?) -> String? {
        guard let answer, answer.response.status == 302 else { return nil }
        return answer.response.headText.split(separator: "\r\n").first { $0.hasPrefix("Location: ") }.map { String($0.dropFirst(10)) }
    }

    @Test("Each visitor goes where the link's parameters say; a wildcard config rule does not shadow it, an exact one does")
    func routed() {
        let router = RouterHarness(Self.config)
        let table = ShortLinkTable.empty.applying(
            [
                Self.link(
                    "spring",
                    [
                        "link": "https://example.com/spring", "ofl": "https://example.com/web", "afl": "https://example.com/android",
                        "st": "Spring sale",
                    ]
                ),
                Self.link("fixed", ["link": "https://example.com/stored"]),
            ],
            revision: 2
        )
        #expect(Self.location(Self.answer(router, "/spring", agent: LinkServingTests.desktop, table: table)) == "https://example.com/web")
        #expect(
            Self.location(Self.answer(router, "/spring?utm_source=x", agent: LinkServingTests.android, table: table))
                == "https://example.com/android"
        )
        let iPhone = Self.answer(router, "/spring", agent: LinkServingTests.iPhone, table: table)
        #expect(iPhone?.response.status == 200 && iPhone?.outcome == "landing")
        #expect(Self.body(iPhone).contains("app-argument=https://example.com/spring"))
        let preview = Self.answer(router, "/spring", agent: LinkServingTests.slack, table: table)
        #expect(Self.body(preview).contains("Spring sale"))
        // The config names /fixed exactly: it wins over the stored link of that path.
        #expect(
            Self.location(Self.answer(router, "/fixed", agent: LinkServingTests.desktop, table: table)) == "https://example.com/from-config"
        )
        // Without the stored link, /spring is the config's wildcard rule's.
        #expect(
            Self.location(Self.answer(router, "/spring", agent: LinkServingTests.desktop, table: .empty)) == "https://example.com/spring"
        )
        // A stored link belongs to its domain only, not to the site's other hosts.
        #expect(
            Self.location(Self.answer(router, "/spring", agent: LinkServingTests.desktop, host: "links.example.com", table: table))
                == "https://example.com/spring"
        )
    }

    @Test("Disabled: 410 Gone with a page; a destination the allowlist no longer covers: refused, never redirected")
    func goneAndRefused() {
        let router = RouterHarness(Self.config)
        let table = ShortLinkTable.empty.applying(
            [Self.link("off", ["link": "https://example.com/x"], state: .disabled), Self.link("evil", ["link": "https://evil.example/x"])],
            revision: 2
        )
        let gone = Self.answer(router, "/off", agent: LinkServingTests.desktop, table: table)
        #expect(gone?.response.status == 410 && gone?.outcome == "gone")
        #expect(Self.body(gone).contains("turned off"))
        let evil = Self.answer(router, "/evil", agent: LinkServingTests.desktop, table: table)
        #expect(evil?.response.status == 400 && evil?.outcome == "refused")
        #expect(!(evil?.response.headText.contains("Location") ?? true))
        let post = LinkAnswerCacheTests.answer(
            router.route(LinkAnswerCacheTests.request("/off", agent: LinkServingTests.desktop, method: "POST"), storedLinks: table)
        )
        #expect(post?.response.status == 405)
    }

    @Test("A new table is never answered from a cached answer of the old one")
    func cacheFollowsTheTable() {
        let router = RouterHarness(Self.config)
        let cache = LinkAnswerCache()
        let first = ShortLinkTable.empty.applying([Self.link("spring", ["link": "https://example.com/one"])], revision: 1)
        #expect(
            Self.location(Self.answer(router, "/spring", agent: LinkServingTests.desktop, table: first, cache: cache))
                == "https://example.com/one"
        )
        #expect(
            Self.location(Self.answer(router, "/spring", agent: LinkServingTests.desktop, table: first, cache: cache))
                == "https://example.com/one"
        )
        #expect(cache.hits == 1)
        let changed = first.applying([Self.link("spring", ["link": "https://example.com/two"], revision: 2)], revision: 2)
        #expect(
            Self.location(Self.answer(router, "/spring", agent: LinkServingTests.desktop, table: changed, cache: cache))
                == "https://example.com/two"
        )
        let disabled = changed.applying(
            [Self.link("spring", ["link": "https://example.com/two"], state: .disabled, revision: 3)],
            revision: 3
        )
        #expect(Self.answer(router, "/spring", agent: LinkServingTests.desktop, table: disabled, cache: cache)?.response.status == 410)
    }

    @Test(
        "A link's rule is worked out once per loop, revision and load: the same answers as without the memo; a change or a reload work it out again"
    )
    func rulesRemembered() {
        let router = RouterHarness(Self.config)
        let cache = LinkAnswerCache()
        var link = Self.link("spring", ["link": "https://example.com/one", "afl": "https://example.com/android"])
        link.id = 7
        let table = ShortLinkTable.empty.applying([link], revision: 1)
        for agent in [LinkServingTests.desktop, LinkServingTests.android, LinkServingTests.iPhone] {
            let remembered = Self.answer(router, "/spring", agent: agent, table: table, cache: cache)
            let fresh = Self.answer(router, "/spring", agent: agent, table: table)
            #expect(
                LinkAnswerCacheTests.bytes(remembered) == LinkAnswerCacheTests.bytes(fresh) && !LinkAnswerCacheTests.bytes(fresh).isEmpty
            )
        }
        #expect(cache.storedRules.hits == 2, "three visitor classes, one check")

        var changed = link
        changed.parameters["link"] = "https://example.com/two"
        changed.revision = 2
        let newer = table.applying([changed], revision: 2)
        #expect(
            Self.location(Self.answer(router, "/spring", agent: LinkServingTests.desktop, table: newer, cache: cache))
                == "https://example.com/two"
        )
        #expect(cache.storedRules.hits == 2, "a new revision is checked again")

        // A reload that takes the link's host off the allowlist: the remembered rule is not used.
        let reloaded = RouterHarness(Self.config.replacingOccurrences(of: #""allow": ["example.com"]"#, with: #""allow": ["example.org"]"#))
        let refused = Self.answer(reloaded, "/spring", agent: LinkServingTests.android, table: newer, cache: cache)
        #expect(refused?.response.status == 400 && refused?.outcome == "refused", "\(Self.body(refused))")
        #expect(cache.storedRules.hits == 2)
    }
}
