import AASA
import HTTP1
import TestSupport
import Testing

@testable import Server

/// A loop's cache of link answers: a repeated click gets the very answer prepared the first time, and
/// nothing else does — another visitor class, host, target or configuration is answered afresh, every
/// answer byte for byte what routing without the cache gives.
@Suite("Link answers cached per loop: the same answers, only for the same request")
struct LinkAnswerCacheTests {
    static func config(web: String) -> String {
        #"""
        {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 123456789,
                                         "android": {"package": "com.example.shop", "sha256": ["\#(LinkServingTests.fingerprint)"]}}},
         "sites": [{"hosts": ["go.example.com", "links.example.com"], "links": {"app": "shop", "openHost": "open.example.com",
                    "firebaseLongLinks": true, "allow": ["example.com"],
                    "rules": [{"/": "/p/*", "web": "\#(web)"}, {"/": "/*", "web": "https://example.com{path}"}]}},
                   {"hosts": ["open.example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/*"}]}]}}]}
        """#
    }

    static func request(_ target: String, host: String = "go.example.com", agent: String, method: String = "GET") -> String {
        "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\nUser-Agent: \(agent)\r\n\r\n"
    }

    static func answer(_ route: Route) -> LinkAnswer? {
        if case .link(let answer, _) = route { return answer }
        return nil
    }

    static func bytes(_ answer: LinkAnswer?) -> [UInt8] {
        guard let response = answer?.response else { return [] }
        return response.head + response.body
    }

    @Test("Every request of a mixed series is answered as without the cache; repeats are hits, each variation a miss")
    func sameAnswers() throws {
        let router = RouterHarness(Self.config(web: "https://example.com/item/{1}"))
        let cache = LinkAnswerCache()
        let agents = [
            LinkServingTests.desktop, LinkServingTests.iPhone, LinkServingTests.android, LinkServingTests.slack, LinkServingTests.instagram,
        ]
        let targets = [
            "/p/42", "/p/42?utm_source=mail", "/p/43", "/other", "/?link=https%3A%2F%2Fexample.com%2Fx&apn=com.example.shop",
            "/?link=https%3A%2F%2Fevil.example%2F",
        ]
        var requests: [String] = []
        for agent in agents {
            for target in targets {
                requests.append(Self.request(target, agent: agent))
                requests.append(Self.request(target, host: "links.example.com", agent: agent))
            }
        }
        for round in 0..<2 {
            for request in requests {
                let cached = Self.answer(router.route(request, linkAnswers: cache))
                let fresh = Self.answer(router.route(request))
                #expect(Self.bytes(cached) == Self.bytes(fresh) && !Self.bytes(fresh).isEmpty, "round \(round): \(request)")
                #expect(cached?.visitor == fresh?.visitor && cached?.outcome == fresh?.outcome)
                // The same request again at once: the answer just prepared, the very object.
                #expect(Self.answer(router.route(request, linkAnswers: cache)) === cached, "\(request)")
            }
        }
        // Every immediate repeat was a hit; the second round's first lookups hit or missed as the 64 slots
        // were shared (a collision costs a miss, never a wrong answer).
        #expect(cache.hits + cache.misses == requests.count * 4)
        #expect(cache.hits >= requests.count * 2, "\(cache.hits) hits")
        // A HEAD shares the GET's answer; another method is refused, not answered from the cache.
        let get = Self.answer(router.route(Self.request("/p/7", agent: LinkServingTests.desktop), linkAnswers: cache))
        let head = Self.answer(router.route(Self.request("/p/7", agent: LinkServingTests.desktop, method: "HEAD"), linkAnswers: cache))
        #expect(get != nil && get === head)
        let post = Self.answer(router.route(Self.request("/p/7", agent: LinkServingTests.desktop, method: "POST"), linkAnswers: cache))
        #expect(post?.response.status == 405)
    }

    @Test("After a reload the same request gets the new configuration's answer, not the cached one")
    func reload() throws {
        let cache = LinkAnswerCache()
        let request = Self.request("/p/42", agent: LinkServingTests.desktop)
        let before = RouterHarness(Self.config(web: "https://example.com/item/{1}"))
        let first = Self.answer(before.route(request, linkAnswers: cache))
        #expect(Self.answer(before.route(request, linkAnswers: cache)) === first)
        let after = RouterHarness(Self.config(web: "https://example.com/product/{1}"))
        let second = Self.answer(after.route(request, linkAnswers: cache))
        let head = second.map { String(decoding: $0.response.head, as: UTF8.self) } ?? ""
        #expect(head.contains("Location: https://example.com/product/42"), "\(head)")
        #expect(second !== first)
    }
}
