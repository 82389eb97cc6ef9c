import AASA
import Gzip
import HTTP1

/// What one host serves on the AASA paths: the document, and its gzip form when that is smaller.
final class SiteResponses: Sendable {
    /// The label used in metrics and logs: the site's first host (bounded cardinality, unlike Host headers).
    let label: String
    let identity: PreparedResponse
    let gzip: PreparedResponse?
    /// Kept to carry `Last-Modified` over a reload when the bytes did not change.
    let bodyHash: UInt64
    let lastModified: Int
    let cacheControl: String
    let hosts: [HostPattern]
    /// What these responses were built from, so a reload that kept the site (same object) keeps them.
    let builtFrom: LoadedSite?

    /// The same prepared responses, now standing for `site` (identical hosts and bytes, a new object):
    /// holding on to the old one would keep its whole decoded config alive.
    init(_ responses: SiteResponses, builtFrom site: LoadedSite) {
        label = responses.label
        identity = responses.identity
        gzip = responses.gzip
        bodyHash = responses.bodyHash
        lastModified = responses.lastModified
        cacheControl = responses.cacheControl
        hosts = responses.hosts
        builtFrom = site
    }

    init(
        label: String,
        hosts: [HostPattern],
        builtFrom: LoadedSite?,
        body: [UInt8],
        cacheControl: String,
        lastModified: Int,
        lastModifiedText: String? = nil,
        hash: UInt64? = nil
    ) {
        self.label = label
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        self.hosts = hosts
        self.builtFrom = builtFrom
        let hash = hash ?? FNV1a.hash(body)
        bodyHash = hash
        let etag = "\"" + FNV1a.hex(hash) + "\""
        // Compress only when it pays: under 1 KB a document gains a few hundred bytes at most, and with
        // thousands of sites the compression would dominate a reload.
        var compressed: [UInt8]?
        if body.count >= 1024, let gzipped = try? Gzip.compress(body, level: 6), gzipped.count + 64 < body.count {
            compressed = gzipped
        }
        var headers: [(String, String)] = [
            ("Server", "aasa-server"),
            ("Content-Type", "application/json"),
            ("Cache-Control", cacheControl),
            ("Last-Modified", lastModifiedText ?? HTTPDate.format(unixSeconds: lastModified)),
        ]
        if compressed != nil { headers.append(("Vary", "Accept-Encoding")) }
        identity = PreparedResponse(status: 200, headers: headers + [("ETag", etag)], body: body)
        gzip = compressed.map {
            // A strong ETag names one representation, so the gzip form gets its own.
            PreparedResponse(
                status: 200,
                headers: headers + [("ETag", "\"" + FNV1a.hex(hash) + "-gz\""), ("Content-Encoding", "gzip")],
                body: $0
            )
        }
    }
}
