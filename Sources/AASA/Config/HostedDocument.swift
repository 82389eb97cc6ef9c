/// What a load knows of a hosted AASA file it found without a finding, and what the compiled-sites
/// snapshot keeps of it (``CompiledSites``) so that a restart with the same bytes skips the check.
public struct HostedDocument: Sendable {
    static let appClipsFlag: UInt8 = 1

    public let digest: CompiledSites.Digest
    /// The one fact of the document a site's own check reads: App Clips cannot be served on a wildcard host.
    public let hasAppClips: Bool
    /// Its gzip form as serving sends it (empty: compressing does not pay): made after the check, when first
    /// needed, and kept from there.
    public let gzip: GzipForm
    /// Taken from a snapshot, not checked by this load.
    public let restored: Bool
}

/// Where a serving load looks for hosted documents a snapshot kept, and the context it runs in: the
/// lookup is there whenever the load keeps a snapshot, even with none read yet (a first start), so the
/// documents it checks can be kept for the next.
struct HostedDocumentLookup: Sendable {
    let snapshot: CompiledSites?
    let context: UInt64
    let compress: @Sendable ([UInt8]) -> [UInt8]

    func kept(_ digest: CompiledSites.Digest) -> HostedDocument? { snapshot?.hostedDocument(digest, context: context) }
}
