import AASA

/// The compiled-sites snapshot reader on arbitrary bytes: as a whole file (refused or read, never a
/// crash), and as one entry framed with a valid header and checksums — a file's, then a hosted
/// document's — so the entry's own layout, the part a checksum would otherwise keep the fuzzer from
/// reaching, is what varies. Every site restored has the path and hosts the entry says; a document is
/// restored only under its own context.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: count))
    _ = CompiledSites.decode(body)

    func little<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    let context: UInt64 = 7
    func framed(files: UInt32, documents: UInt32) -> [UInt8] {
        var framed = CompiledSites.magic + little(CompiledSites.formatVersion) + little(context) + little(context) + little(files)
        framed += little(documents)
        framed += little(framed.withUnsafeBytes { FNV1a.wordHash($0) })
        return framed + little(UInt32(body.count)) + body + little(body.withUnsafeBytes { FNV1a.wordHash($0) })
    }
    if let documents = CompiledSites.decode(framed(files: 0, documents: 1)) {
        precondition(documents.documentCount == 1 && documents.entries.isEmpty, "one document framed")
        for digest in documents.documents.keys {
            if let document = documents.hostedDocument(digest, context: context) { precondition(document.digest == digest) }
            precondition(documents.hostedDocument(digest, context: context + 1) == nil, "a document restored under another context")
        }
    }
    guard let snapshot = CompiledSites.decode(framed(files: 1, documents: 0)) else { return 0 }
    precondition(snapshot.entries.count == 1, "one entry framed, \(snapshot.entries.count) read")
    for (key, entry) in snapshot.entries {
        let path = "/fuzz/" + key
        guard let sites = snapshot.sites(for: path, configPath: "/fuzz/config.json", digest: entry.digest, context: context)
        else { continue }
        for site in sites {
            precondition(site.definedIn == path && site.isServingForm, "a restored site names another file")
            // Each host's path is its place in the site's `hosts`, derived from the site's path.
            precondition(site.site.hosts.arePaths(hostsOf: site.site.origin.path), "a host outside its site")
            precondition(
                site.site.hosts.indices.allSatisfy { site.site.hosts[$0].origin.path == site.site.origin.path.key("hosts").index($0) },
                "a host's path is not its place in the site"
            )
        }
        precondition(
            snapshot.sites(for: path, configPath: "/fuzz/config.json", digest: entry.digest, context: context + 1) == nil,
            "restored under another context"
        )
    }
    return 0
}
