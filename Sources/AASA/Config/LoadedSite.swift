/// Why a referenced file could not be read (the CLI and server fill this in from the OS error).
public struct FileReadError: Error, Sendable {
    public var message: String
    /// The file's size, when it was not read because it is over the limit.
    public var size: Int?
    public init(_ message: String) { self.message = message }
}

/// One site, ready to serve: the exact bytes and the document they encode.
///
/// A class, immutable: a reload hands thousands of these from one load to the next.
public final class LoadedSite: Sendable {
    public let site: Site
    /// Nil when the site's document could not be built (its errors are in the diagnostics).
    public var document: AASADocument? { model?.document }
    /// What is served: canonical compact JSON for generated sites, the file's bytes for verbatim ones.
    /// Held once, at a fixed address: the server's prepared response points at it.
    public let served: ImmutableBytes
    /// A copy of ``served``.
    public var bytes: [UInt8] { served.array }
    /// The verbatim file's path as resolved against the config's directory.
    public var file: String? { extras?.file }
    var verbatimRoot: JSONNode? { model?.verbatimRoot }
    /// What only the command line reads.
    private var model: Model? { extras?.model }
    /// Everything most serving-form sites do not have, boxed: a million of them then pay one pointer
    /// each for it, not the inline space of every optional field (48 bytes a site). A serving-form site
    /// with nothing of its own to box shares its included file's (``IncludedFile``).
    private let extras: Extras?

    fileprivate final class Extras: Sendable {
        let file: String?
        let model: Model?
        let assetLinks: AssetLinks?
        let landingPage: LandingPage?
        let hosted: HostedDocument?
        let isServingForm: Bool
        let definedIn: String?

        init(
            file: String?,
            model: Model?,
            assetLinks: AssetLinks?,
            landingPage: LandingPage?,
            hosted: HostedDocument?,
            isServingForm: Bool,
            definedIn: String?
        ) {
            self.file = file
            self.model = model
            self.assetLinks = assetLinks
            self.landingPage = landingPage
            self.hosted = hosted
            self.isServingForm = isServingForm
            self.definedIn = definedIn
        }

        var isPlainServingForm: Bool {
            isServingForm && file == nil && model == nil && assetLinks == nil && landingPage == nil && hosted == nil
        }
    }

    /// The included file sites are written in, made once a file: its serving-form sites with nothing else
    /// to box share one extras object saying where they are written, instead of keeping the path each
    /// (16 bytes, which took a loaded site from 96 to 112 bytes in malloc's chunks).
    public struct IncludedFile: Sendable {
        fileprivate let plainServingExtras: Extras
        /// The box every generated serving-form site of the file points to. A file's own: one box for every
        /// file had its counter incremented half a million times by both loading threads at once.
        fileprivate let servingGenerated = Site.Source.generated(GeneratedSite())

        public init(_ path: String) {
            plainServingExtras = Extras(
                file: nil,
                model: nil,
                assetLinks: nil,
                landingPage: nil,
                hosted: nil,
                isServingForm: true,
                definedIn: path
            )
        }

        public var path: String { plainServingExtras.definedIn! }

        fileprivate init(sharing extras: Extras) { plainServingExtras = extras }
    }

    final class Model: Sendable {
        let document: AASADocument?
        let verbatimRoot: JSONNode?

        init(document: AASADocument?, verbatimRoot: JSONNode?) {
            self.document = document
            self.verbatimRoot = verbatimRoot
        }
    }
    /// False for an Android-only site: its hosts get the unknown-host answer on the AASA paths.
    public var servesApple: Bool { if case .none = site.source { return false } else { return true } }
    /// `/.well-known/assetlinks.json`, when the site has Android apps.
    public var assetLinks: AssetLinks? { extras?.assetLinks }

    /// A site's Android statement list: what is served and what it says.
    public final class AssetLinks: Sendable {
        public let bytes: [UInt8]
        /// Nil when a hosted file could not be parsed (its errors are in the diagnostics).
        public let statements: [AssetStatement]?
        /// The hosted file, resolved against the config's directory.
        public let file: String?
        let verbatimRoot: JSONNode?

        init(bytes: [UInt8], statements: [AssetStatement]?, file: String?, verbatimRoot: JSONNode?) {
            self.bytes = bytes
            self.statements = statements
            self.file = file
            self.verbatimRoot = verbatimRoot
        }

        /// The statement list indented for reading (`generate --pretty`).
        public func prettyBytes() -> [UInt8] {
            if let verbatimRoot { return JSONWriter.bytes(JSONOutput(verbatimRoot), pretty: true) }
            if let statements { return JSONWriter.bytes(AssetLinksGenerator.render(statements), pretty: true) }
            return bytes
        }
    }

    /// The site's own landing page template (`links.landingPage`), read and parsed.
    public var landingPage: LandingPage? { extras?.landingPage }

    public final class LandingPage: Sendable {
        /// Resolved against the config's directory.
        public let file: String
        /// Kept to tell, on a reload, whether the file changed.
        public let bytes: [UInt8]
        /// Nil when the file could not be read or parsed (its errors are in the diagnostics).
        public let template: LandingPageTemplate?

        init(file: String, bytes: [UInt8], template: LandingPageTemplate?) {
            self.file = file
            self.bytes = bytes
            self.template = template
        }
    }

    /// The hosted AASA file as checked without a finding by a serving load, or as a snapshot kept it.
    var hosted: HostedDocument? { extras?.hosted }

    /// The hosted document's gzip form as the serving load made it or the compiled-sites snapshot kept
    /// it (empty: compressing does not pay); nil when the site hosts no such document.
    public var preparedGzip: GzipForm? { hosted?.gzip }

    /// How logs and metrics name the site: its first host (``Site/name``), without copying the site.
    public var label: String { site.name }

    /// True once ``forServing()`` dropped what only the command line needs (a full-form site always has
    /// its extras).
    public var isServingForm: Bool { extras?.isServingForm ?? true }
    /// The included file the site is written in; nil for the config itself.
    public var definedIn: String? { extras?.definedIn }

    /// Where the site is written, as the constructors take it.
    var includedFile: IncludedFile? {
        guard let extras, let path = extras.definedIn else { return nil }
        return extras.isPlainServingForm ? IncludedFile(sharing: extras) : IncludedFile(path)
    }

    convenience init(
        site: Site,
        document: AASADocument?,
        bytes: [UInt8],
        file: String?,
        verbatimRoot: JSONNode?,
        assetLinks: AssetLinks? = nil,
        landingPage: LandingPage? = nil,
        definedIn: String? = nil
    ) {
        self.init(
            site: site,
            document: document,
            served: bytes.isEmpty ? .empty : ImmutableBytes.copy(bytes),
            file: file,
            verbatimRoot: verbatimRoot,
            assetLinks: assetLinks,
            landingPage: landingPage,
            definedIn: definedIn.map(IncludedFile.init)
        )
    }

    init(
        site: Site,
        document: AASADocument?,
        served: ImmutableBytes,
        file: String?,
        verbatimRoot: JSONNode?,
        assetLinks: AssetLinks? = nil,
        landingPage: LandingPage? = nil,
        hosted: HostedDocument? = nil,
        isServingForm: Bool = false,
        definedIn: IncludedFile? = nil
    ) {
        self.site = site
        let model = document == nil && verbatimRoot == nil ? nil : Model(document: document, verbatimRoot: verbatimRoot)
        self.served = served
        if isServingForm && file == nil && model == nil && assetLinks == nil && landingPage == nil && hosted == nil {
            extras = definedIn?.plainServingExtras
        } else {
            extras = Extras(
                file: file,
                model: model,
                assetLinks: assetLinks,
                landingPage: landingPage,
                hosted: hosted,
                isServingForm: isServingForm,
                definedIn: definedIn?.path
            )
        }
    }

    /// What serving and the next reload need, and nothing else: the served bytes, the hosts (their
    /// positions sharing the site's path), where hosted files live. The decoded config and the
    /// document model — most of a site's memory — are dropped; `match` and `check` load the full form.
    public func forServing() -> LoadedSite {
        if isServingForm { return self }
        return Self.servingForm(
            site: site,
            served: served,
            file: file,
            assetLinks: assetLinks,
            landingPage: landingPage,
            hosted: hosted,
            definedIn: includedFile
        )
    }

    /// A site built straight into its serving form (``forServing()``), without the full form first.
    static func servingForm(
        site: Site,
        served: ImmutableBytes,
        file: String?,
        assetLinks: AssetLinks?,
        landingPage: LandingPage?,
        hosted: HostedDocument? = nil,
        definedIn: IncludedFile?
    )
        -> LoadedSite
    {
        // Hosts read from the config keep their storage (their paths derived from the site's); any other
        // list gets the site's path for every host, not a path each.
        let hosts = site.hosts.arePaths(hostsOf: site.origin.path) ? site.hosts : site.hosts.sharingPath(site.origin.path)
        let source: Site.Source
        switch site.source {
        case .generated: source = definedIn?.servingGenerated ?? Self.servingGenerated
        case .file(let reference): source = .file(reference)
        case .none: source = .none
        }
        let android: Site.AndroidSource?
        switch site.android {
        case .generated: android = .generated([])
        case .file(let reference): android = .file(reference)
        case nil: android = nil
        }
        return LoadedSite(
            site: Site(hosts: hosts, source: source, android: android, links: site.links?.servingForm(), origin: site.origin),
            document: nil,
            served: served,
            file: file,
            verbatimRoot: nil,
            assetLinks: assetLinks.map {
                $0.statements == nil && $0.verbatimRoot == nil
                    ? $0 : AssetLinks(bytes: $0.bytes, statements: nil, file: $0.file, verbatimRoot: nil)
            },
            landingPage: landingPage,
            hosted: hosted,
            isServingForm: true,
            definedIn: definedIn
        )
    }

    /// One box for every serving-form generated site: what was generated is in ``bytes``.
    private static let servingGenerated = Site.Source.generated(GeneratedSite())

    /// The document indented for reading (`generate --pretty`); same content as ``bytes``.
    public func prettyBytes() -> [UInt8] {
        if let verbatimRoot { return JSONWriter.bytes(JSONOutput(verbatimRoot), pretty: true) }
        if let document { return AASARenderer.bytes(document, pretty: true) }
        return bytes
    }
}
