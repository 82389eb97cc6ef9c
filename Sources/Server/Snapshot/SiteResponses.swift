import AASA
import Gzip
import HTTP1
import Posix

/// What one host serves: the AASA document, and its gzip form when that is smaller, and its Android
/// statement list when it has one.
final class SiteResponses: Sendable {
    /// The label used in logs and reloads: the site's first host (bounded cardinality, unlike Host headers);
    /// read from the site, not kept (16 bytes a site).
    var label: String { builtFrom?.label ?? "unknown" }
    let identity: PreparedResponse
    var gzip: GzipResponse? { extras?.gzip }
    /// False for an Android-only site: the AASA paths answer as for an unknown host.
    var servesApple: Bool { extras?.servesApple ?? true }
    /// `/.well-known/assetlinks.json`; nil answers 404.
    var assetLinks: PreparedDocument? { extras?.assetLinks }
    /// Kept to carry `Last-Modified` over a reload when the bytes did not change: the served document's
    /// (the site's, or the unknown host's), not kept twice.
    var bodyHash: UInt64 { (builtFrom?.served ?? Snapshot.emptyDocument).hash }
    /// Both documents: what a reload compares to say which hosts changed.
    var contentHash: UInt64 { assetLinks.map { FNV1a.hash(FNV1a.hex($0.bodyHash).utf8.map { $0 }, startingWith: bodyHash) } ?? bodyHash }
    /// Read from the identity response's shared lines, which state it (a field of its own took this object
    /// from 48 to 64 bytes in malloc's chunks, a million times over).
    var lastModified: Int { identity.sharedLastModified! }
    /// The assetlinks document's own: a reload that changes only the AASA leaves it as it was.
    var assetLinksLastModified: Int { extras?.assetLinksLastModified ?? lastModified }
    /// What these responses were built from, so a reload that kept the site (same object) keeps them; nil
    /// for the unknown host's.
    let builtFrom: LoadedSite?
    /// The site's link paths, compiled (nil for most sites).
    var links: CompiledLinks? { extras?.links }
    /// The hosts served (read from the site, not kept twice: a million hosts are many arrays).
    var hosts: [HostPattern] { builtFrom?.site.hosts.patterns ?? [] }

    /// What the AASA paths answer: the gzip form when asked for and there is one; nil for an Android-only
    /// site. One call for the request path, inlined into the snapshot's lookup so nothing is retained.
    @inline(__always)
    func appleResponse(gzip: Bool) -> PreparedResponse? {
        guard let extras else { return identity }
        guard extras.servesApple else { return nil }
        guard gzip, let compressed = extras.gzip else { return identity }
        return compressed.response()
    }

    /// The same host patterns in the same order, compared where the sites keep them (no strings made).
    func hasSameHosts(as other: SiteResponses) -> Bool {
        switch (builtFrom, other.builtFrom) {
        case (nil, nil): return true
        case (let one?, let other?): return one.site.hosts.hasSamePatterns(as: other.site.hosts)
        default: return false
        }
    }
    /// What most sites do not have (a gzip form, Android statements, link rules), boxed: a million sites
    /// then pay one pointer each for it (48 bytes a site less).
    private let extras: Extras?

    private final class Extras: Sendable {
        let gzip: GzipResponse?
        let servesApple: Bool
        let assetLinks: PreparedDocument?
        let assetLinksLastModified: Int
        let links: CompiledLinks?

        init(gzip: GzipResponse?, servesApple: Bool, assetLinks: PreparedDocument?, assetLinksLastModified: Int, links: CompiledLinks?) {
            self.gzip = gzip
            self.servesApple = servesApple
            self.assetLinks = assetLinks
            self.assetLinksLastModified = assetLinksLastModified
            self.links = links
        }

        /// Nil when every field has its common value.
        static func make(
            gzip: GzipResponse?,
            servesApple: Bool,
            assetLinks: PreparedDocument?,
            assetLinksLastModified: Int,
            lastModified: Int,
            links: CompiledLinks?
        ) -> Extras? {
            if gzip == nil, servesApple, assetLinks == nil, assetLinksLastModified == lastModified, links == nil { return nil }
            return Extras(
                gzip: gzip,
                servesApple: servesApple,
                assetLinks: assetLinks,
                assetLinksLastModified: assetLinksLastModified,
                links: links
            )
        }
    }

    /// The same prepared responses, now standing for `site` (identical hosts and bytes, a new object):
    /// holding on to the old one would keep its whole decoded config alive.
    init(_ responses: SiteResponses, builtFrom site: LoadedSite) {
        identity = responses.identity
        builtFrom = site
        // The documents carried over; the link rules are the new config's (they change no document byte).
        extras = Extras.make(
            gzip: responses.gzip,
            servesApple: responses.servesApple,
            assetLinks: responses.assetLinks,
            assetLinksLastModified: responses.assetLinksLastModified,
            lastModified: responses.lastModified,
            links: site.site.links.map { CompiledLinks($0, landingPage: site.landingPage?.template) }
        )
    }

    /// The site's served document (the empty one for the unknown host's responses, `builtFrom` nil),
    /// stamped with `headers`' Last-Modified.
    init(
        builtFrom: LoadedSite?,
        headers: DocumentHeaders,
        servesApple: Bool = true,
        assetLinks: [UInt8]? = nil,
        assetLinksStamp: (lastModified: Int, headers: DocumentHeaders)? = nil
    ) {
        self.builtFrom = builtFrom
        let document = PreparedDocument(
            body: builtFrom?.served ?? Snapshot.emptyDocument,
            headers: headers,
            preparedGzip: builtFrom?.preparedGzip
        )
        let lastModified = headers.lastModified
        identity = document.identity
        extras = Extras.make(
            gzip: document.gzip,
            servesApple: servesApple,
            assetLinks: assetLinks.map { PreparedDocument(body: ImmutableBytes.copy($0), headers: assetLinksStamp?.headers ?? headers) },
            assetLinksLastModified: assetLinksStamp?.lastModified ?? lastModified,
            lastModified: lastModified,
            links: builtFrom.flatMap { site in site.site.links.map { CompiledLinks($0, landingPage: site.landingPage?.template) } }
        )
    }
}

/// The header lines every document stamped with one `Last-Modified` shares, kept once for all of them:
/// without and with `Vary` (documents long enough to have a gzip form).
struct DocumentHeaders: Sendable {
    let plain: SharedHeaders
    let varied: SharedHeaders
    var lastModified: Int { plain.lastModified! }

    init(cacheControl: String, lastModified: Int) {
        let headers = [
            ("Server", "aasa-server"),
            ("Content-Type", "application/json"),
            ("Cache-Control", cacheControl),
            ("Last-Modified", HTTPDate.format(unixSeconds: lastModified)),
        ]
        plain = SharedHeaders(status: 200, headers: headers, lastModified: lastModified)
        varied = SharedHeaders(status: 200, headers: headers + [("Vary", "Accept-Encoding")], lastModified: lastModified)
    }
}

/// One JSON document ready to send: headers and body prepared once, with a gzip form when it pays.
struct PreparedDocument: Sendable {
    /// The gzip form served for `body`, nil when it does not pay: under 1 KB a document gains a few hundred
    /// bytes at most, and with thousands of sites the compression would dominate a reload. The one rule,
    /// also for what the compiled-sites snapshot keeps.
    static func gzipForm(_ body: [UInt8]) -> [UInt8]? {
        guard body.count >= minimumGzipped, let gzipped = try? Gzip.compress(body, level: 6), gzipped.count + 64 < body.count else {
            return nil
        }
        return gzipped
    }

    /// Below this a gzip form is never made.
    static let minimumGzipped = 1024

    /// From this size a document's body is also kept in a sealed memory file, which plain connections send
    /// from with `sendfile`: measured on loopback (docs/benchmarks.md), the kernel sending the body from the
    /// file's pages cost 0.91× the server CPU of copying it in from memory at 8 and 16 KB and 0.84× at 33 and
    /// 101 KB, the second system call included.
    static let minimumSentFromFile = 8 * 1024

    /// Every such file holds a descriptor, which connections need too, and a second copy of its bytes: past
    /// these, larger documents are sent by copying, as every document was before.
    static let filesKept = (count: 1024, bytes: 32 << 20)

    let identity: PreparedResponse
    /// Nil for a document too short to compress.
    let gzip: GzipResponse?
    let bodyHash: UInt64

    /// The identity body is `body` itself, by pointer (the loaded site holds it); the common header lines
    /// are `headers`', shared; only the ETag (and Content-Length) are this document's own. `preparedGzip`:
    /// the body's gzip form as the load checked it or the compiled-sites snapshot kept it, made when first
    /// needed and then shared with the snapshot's writer.
    ///
    /// A document of 1 KB or more says `Vary: Accept-Encoding` whether or not its form turns out to pay:
    /// which it does is known only once it is made, after the snapshot is published, and a first start and
    /// a restart from the snapshot answer with the same headers.
    init(body: ImmutableBytes, headers: DocumentHeaders, preparedGzip: GzipForm? = nil) {
        let hash = body.hash
        bodyHash = hash
        guard body.count >= Self.minimumGzipped else {
            identity = PreparedResponse(shared: headers.plain, etag: hash, body: body.buffer, owner: body.owner)
            gzip = nil
            return
        }
        let identity: PreparedResponse
        if body.count >= Self.minimumSentFromFile,
            let file = SealedMemoryFile.make(body.buffer, name: "aasa-server-document", limit: Self.filesKept)
        {
            identity = PreparedResponse(shared: headers.varied, etag: hash, body: file.buffer, owner: file)
        } else {
            identity = PreparedResponse(shared: headers.varied, etag: hash, body: body.buffer, owner: body.owner)
        }
        self.identity = identity
        gzip = GzipResponse(
            form: preparedGzip ?? GzipForm(of: body, compress: { Self.gzipForm($0) ?? [] }),
            identity: identity,
            headers: headers.varied,
            etag: hash
        )
    }
}

/// The responses of one group of sites (the config's own, or one included file's), in its order: carried
/// whole into the next snapshot when the loader took the group over.
final class ResponseGroup: Sendable {
    let builtFrom: SiteList.Group
    let responses: [SiteResponses]

    init(builtFrom: SiteList.Group, responses: [SiteResponses]) {
        self.builtFrom = builtFrom
        self.responses = responses
    }
}
