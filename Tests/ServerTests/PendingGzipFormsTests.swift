import AASA
import Gzip
import HTTP1
import TestSupport
import Testing

@testable import Server

@Suite("Gzip forms made after the snapshot is published")
struct PendingGzipFormsTests {
    static let zipped = "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nAccept-Encoding: gzip\r\n\r\n"
    static let plain = "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"

    /// A second site whose document is over 1 KB, beside example.com's.
    static func config() -> String {
        let components = (0..<40).map { #"{"/": "/other-\#($0)/*", "comment": "other \#($0)"}"# }.joined(separator: ",")
        return testConfig(
            extraSites:
                #", {"hosts": ["other.example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [\#(components)]}]}}"#
        )
    }

    static func pending(_ snapshot: Snapshot) -> [GzipResponse] {
        snapshot.groups.flatMap { $0.responses.compactMap(\.gzip) }.filter { !$0.isSettled }
    }

    @Test(
        "Building a snapshot compresses nothing; a gzip request before the pass makes its own form, the pass makes the rest, each the document compressed"
    )
    func madeAfterPublishing() throws {
        let router = RouterHarness(Self.config())
        #expect(Self.pending(router.snapshot).count == 2, "both documents over 1 KB wait for their form")
        let identity = try #require(router.response(Self.plain)).response
        #expect(Self.pending(router.snapshot).count == 2, "an identity answer makes no form")
        #expect(identity.headText.contains("Vary: Accept-Encoding\r\n"))

        let zipped = try #require(router.response(Self.zipped)).response
        #expect(zipped.headText.contains("Content-Encoding: gzip\r\n") && zipped.headText.contains("-gz\"\r\n"))
        #expect(try Gzip.decompress(Array(zipped.bodyBytes)) == Array(identity.bodyBytes))
        #expect(Self.pending(router.snapshot).count == 1, "the request made the form it wanted")

        #expect(PendingGzipForms.make(in: router.snapshot) == 1)
        #expect(Self.pending(router.snapshot).isEmpty)
        #expect(PendingGzipForms.make(in: router.snapshot) == 0, "nothing is made twice")
        // The request's form is the one kept: the same response object, not a second compression.
        #expect(try #require(router.response(Self.zipped)).response === zipped)
        let other = try #require(
            router.response("GET /apple-app-site-association HTTP/1.1\r\nHost: other.example.com\r\nAccept-Encoding: gzip\r\n\r\n")
        ).response
        let otherPlain = try #require(router.response("GET /apple-app-site-association HTTP/1.1\r\nHost: other.example.com\r\n\r\n"))
            .response
        #expect(try Gzip.decompress(Array(other.bodyBytes)) == Array(otherPlain.bodyBytes))
    }

    @Test("A document whose gzip form does not pay answers a gzip request with its identity response")
    func formThatDoesNotPay() throws {
        let body = ImmutableBytes.copy(Array(repeating: UInt8(ascii: " "), count: 2048))
        let headers = DocumentHeaders(cacheControl: "no-cache", lastModified: 1_764_500_000)
        let document = PreparedDocument(body: body, headers: headers, preparedGzip: GzipForm(made: .empty))
        let gzip = try #require(document.gzip)
        #expect(!gzip.isSettled)
        #expect(gzip.response() === document.identity && gzip.isSettled)
        #expect(document.identity.headText.contains("Vary: Accept-Encoding\r\n"), "the same headers as when it pays: known only once made")
        let small = PreparedDocument(body: ImmutableBytes.copy(Array("{}".utf8)), headers: headers)
        #expect(small.gzip == nil && !small.identity.headText.contains("Vary"))
    }
}
