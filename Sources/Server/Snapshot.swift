public import AASA
import Gzip
import HTTP1
import Posix
public import TLS

/// A response built once, when the config loads: everything but the `Date` and `Connection` lines.
///
/// Serving it is a copy of these bytes plus the cached date into the connection's output buffer.
final class PreparedResponse: Sendable {
    let status: Int
    /// Status line and headers, each line ending in CRLF, without `Date` and without the blank line.
    let head: [UInt8]
    let body: [UInt8]

    init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        var text = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "Content-Length: \(body.count)\r\n"
        head = Array(text.utf8)
        self.body = body
    }

    static func json(status: Int, _ body: String, extraHeaders: [(String, String)] = []) -> PreparedResponse {
        PreparedResponse(
            status: status,
            headers: [("Server", "aasa-server"), ("Content-Type", "application/json"), ("Cache-Control", "no-store")] + extraHeaders,
            body: Array((body + "\n").utf8)
        )
    }
}

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

    init(label: String, hosts: [HostPattern], builtFrom: LoadedSite?, body: [UInt8], cacheControl: String, lastModified: Int, lastModifiedText: String? = nil, hash: UInt64? = nil) {
        self.label = label
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        self.hosts = hosts
        self.builtFrom = builtFrom
        let hash = hash ?? fnv1a(body)
        bodyHash = hash
        let etag = "\"" + hex64(hash) + "\""
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
                headers: headers + [("ETag", "\"" + hex64(hash) + "-gz\""), ("Content-Encoding", "gzip")],
                body: $0
            )
        }
    }
}

/// The configuration in force: immutable, built completely before it is published, swapped atomically.
///
/// A request takes the snapshot once and is answered entirely from it, so a reload can never mix the
/// headers of one config with the body of another.
public final class Snapshot: Sendable {
    public let generation: Int
    public let loadedAt: Double
    let hosts: HostTable<Int>
    let sites: [SiteResponses]
    /// Nil when `unknownHost` is "404".
    let unknownHost: SiteResponses?
    let healthPath: [UInt8]?
    /// Certificates for TLS listeners; swapped with the rest of the config on reload.
    let tls: TLSContexts?
    let notFound = PreparedResponse.json(status: 404, #"{"error":"not found"}"#)
    let methodNotAllowed = PreparedResponse.json(
        status: 405,
        #"{"error":"method not allowed","allow":["GET","HEAD"]}"#,
        extraHeaders: [("Allow", "GET, HEAD")]
    )
    let notImplemented = PreparedResponse.json(status: 501, #"{"error":"method not implemented"}"#)
    let health = PreparedResponse.json(status: 200, #"{"status":"ok"}"#)

    /// Builds every response for `config`. `previous` supplies `Last-Modified` for documents that did not
    /// change; `now` is the time a changed document is stamped with.
    public init(
        config: LoadedConfig,
        settings: ServerSettings,
        tls: TLSContexts? = nil,
        generation: Int,
        now: Double,
        previous: Snapshot? = nil
    ) {
        self.tls = tls
        self.generation = generation
        loadedAt = now
        let previousSites = previous?.sites ?? []
        var previousByLabel: [String: Int]?
        var carriedOver = [Bool](repeating: false, count: previousSites.count)
        var isCarriedOver: [Bool] = []
        isCarriedOver.reserveCapacity(config.sites.count)
        // Decided in order (carried over, or to build with which Last-Modified), then built in parallel:
        // building a site's responses (headers, ETag, gzip) is independent of every other site.
        struct ToBuild: Sendable {
            let label: String
            let loaded: LoadedSite
            let hash: UInt64
            let stamp: Int
            let dateText: String
        }
        enum Plan: Sendable {
            case carried(SiteResponses)
            case build(ToBuild)
        }
        var plans: [Plan] = []
        plans.reserveCapacity(config.sites.count)
        // Most sites share one Last-Modified (the load time); format each distinct second once.
        var dateTexts: [Int: String] = [:]
        for loaded in config.sites {
            let position = plans.count
            // A site the loader carried over unchanged is the very same object: its responses carry over.
            if position < previousSites.count, previousSites[position].builtFrom === loaded,
                previousSites[position].cacheControl == settings.cacheControl
            {
                plans.append(.carried(previousSites[position]))
                carriedOver[position] = true
                isCarriedOver.append(true)
                continue
            }
            let label = loaded.site.name
            let hash = fnv1a(loaded.bytes)
            // Sites usually keep their order across reloads; look up by label only when they did not.
            var previousIndex: Int?
            if position < previousSites.count && previousSites[position].label == label {
                previousIndex = position
            } else if !previousSites.isEmpty {
                if previousByLabel == nil {
                    var byLabel: [String: Int] = [:]
                    for (index, site) in previousSites.enumerated() { byLabel[site.label] = index }
                    previousByLabel = byLabel
                }
                previousIndex = previousByLabel?[label]
            }
            let unchanged = previousIndex.flatMap { previousSites[$0].bodyHash == hash ? previousSites[$0] : nil }
            let hosts = loaded.site.hosts
            if let unchanged, let previousIndex, unchanged.cacheControl == settings.cacheControl, unchanged.hosts.count == hosts.count,
                zip(unchanged.hosts, hosts).allSatisfy({ $0 == $1.value }), unchanged.identity.body == loaded.bytes
            {
                // Same hosts, same bytes, same headers: the prepared responses (and their gzip) carry over.
                plans.append(.carried(unchanged.builtFrom === loaded ? unchanged : SiteResponses(unchanged, builtFrom: loaded)))
                carriedOver[previousIndex] = true
                isCarriedOver.append(true)
            } else {
                let stamp = unchanged?.lastModified ?? Int(now)
                let dateText = dateTexts[stamp] ?? HTTPDate.format(unixSeconds: stamp)
                dateTexts[stamp] = dateText
                plans.append(.build(ToBuild(label: label, loaded: loaded, hash: hash, stamp: stamp, dateText: dateText)))
                isCarriedOver.append(false)
            }
        }
        let cacheControl = settings.cacheControl
        let decided = plans
        let build: @Sendable (Int) -> SiteResponses = { index in
            switch decided[index] {
            case .carried(let responses): return responses
            case .build(let site):
                return SiteResponses(
                    label: site.label,
                    hosts: site.loaded.site.hosts.map(\.value),
                    builtFrom: site.loaded,
                    body: site.loaded.bytes,
                    cacheControl: cacheControl,
                    lastModified: site.stamp,
                    lastModifiedText: site.dateText,
                    hash: site.hash
                )
            }
        }
        let toBuild = isCarriedOver.count { !$0 }
        let sites = toBuild >= 256 ? Posix.parallelMap(plans.count, build) : plans.indices.map(build)
        hosts = config.hostTable
        self.sites = sites
        // Carried-over sites have the same hosts and bytes on both sides, and a host belongs to one site,
        // so only the others can hold added, removed or changed hosts. A site with the same hosts at the
        // same position as before is compared directly; only the rest need a lookup by host.
        var changes = Changes(added: [], removed: [], changed: [])
        if previous != nil {
            var paired = carriedOver
            var unmatched: [SiteResponses] = []
            for (position, site) in sites.enumerated() where !isCarriedOver[position] {
                if position < previousSites.count, !paired[position], previousSites[position].hosts == site.hosts {
                    paired[position] = true
                    if previousSites[position].bodyHash != site.bodyHash {
                        for host in site.hosts { changes.changed.add(host.description) }
                    }
                } else {
                    unmatched.append(site)
                }
            }
            changes.compare(before: zip(previousSites, paired).filter { !$0.1 }.map(\.0), after: unmatched)
        }
        changesFromPrevious = changes
        if config.config?.unknownHost == .notFound {
            unknownHost = nil
        } else {
            let stamp = previous?.unknownHost?.lastModified ?? Int(now)
            unknownHost = SiteResponses(
                label: "unknown",
                hosts: [],
                builtFrom: nil,
                body: LoadedConfig.emptyDocumentBytes,
                cacheControl: settings.cacheControl,
                lastModified: stamp
            )
        }
        healthPath = settings.healthPath.map { Array($0.utf8) }
    }

    /// What changed from the snapshot this one replaced (all hosts added for the first).
    let changesFromPrevious: Changes

    /// Hosts added, removed and changed: counted, and the first few named (log lines stay one line).
    struct Changes {
        /// The alphabetically first few hosts and how many there are in all.
        struct Listing {
            static let shown = 5
            private(set) var first: [String] = []
            private(set) var count = 0

            init() {}

            init(_ hosts: [String]) { for host in hosts { add(host) } }

            /// Keeps the smallest `shown` names, so a 10,000-host reload does not sort 10,000 strings.
            mutating func add(_ host: String) {
                count += 1
                if first.count == Self.shown, let last = first.last, host >= last { return }
                let position = first.firstIndex { host < $0 } ?? first.count
                first.insert(host, at: position)
                if first.count > Self.shown { first.removeLast() }
            }

            var isEmpty: Bool { count == 0 }

            var text: String {
                first.joined(separator: ", ") + (count > first.count ? " and \(count - first.count) more" : "")
            }
        }

        var added = Listing()
        var removed = Listing()
        var changed = Listing()

        init(added: [String], removed: [String], changed: [String]) {
            self.added = Listing(added)
            self.removed = Listing(removed)
            self.changed = Listing(changed)
        }

        /// Adds the differences between two groups of sites that share no host with any other site.
        mutating func compare(before: [SiteResponses], after: [SiteResponses]) {
            var old: [HostPattern: UInt64] = [:]
            for site in before { for host in site.hosts { old[host] = site.bodyHash } }
            var new: [HostPattern: UInt64] = [:]
            for site in after { for host in site.hosts { new[host] = site.bodyHash } }
            for (host, hash) in new {
                if let previous = old[host] {
                    if previous != hash { changed.add(host.description) }
                } else {
                    added.add(host.description)
                }
            }
            for host in old.keys where new[host] == nil { removed.add(host.description) }
        }

        var summary: String {
            if added.isEmpty && removed.isEmpty && changed.isEmpty { return "no host changed" }
            var parts: [String] = []
            if !added.isEmpty { parts.append("hosts added: " + added.text) }
            if !removed.isEmpty { parts.append("hosts removed: " + removed.text) }
            if !changed.isEmpty { parts.append("hosts changed: " + changed.text) }
            return parts.joined(separator: "; ")
        }
    }

}

/// FNV-1a, 64-bit: a content hash for strong ETags (not a security boundary; the body is public).
func fnv1a(_ bytes: [UInt8]) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01B3
    }
    return hash
}

func hex64(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}
