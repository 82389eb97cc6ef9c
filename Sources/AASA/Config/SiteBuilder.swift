/// Builds one site: its AASA document (generated, or a hosted file read and checked) and its Android
/// statement list, with the findings of each.
enum SiteBuilder {
    static func loadSite(
        _ site: Site,
        configPath: String,
        readFile: ConfigLoader.FileReader,
        findings: inout [Diagnostic],
        definedIn: LoadedSite.IncludedFile? = nil,
        pool: DocumentPool? = nil,
        servingOnly: Bool = false,
        hostedDocuments: HostedDocumentLookup? = nil
    ) -> LoadedSite {
        let apple = loadApple(
            site,
            configPath: configPath,
            readFile: readFile,
            findings: &findings,
            hostedDocuments: servingOnly ? hostedDocuments : nil,
            keepsDocument: !servingOnly || site.links != nil
        )
        let served = apple.bytes.count == 0 ? ImmutableBytes.empty : apple.bytes
        let assetLinks = loadAssetLinks(site, configPath: configPath, readFile: readFile, findings: &findings)
        var landingPage: LoadedSite.LandingPage?
        if let links = site.links {
            let linkFindings = LinkCoverage.check(links, document: apple.document, site: site)
            if !linkFindings.isEmpty { findings += linkFindings.inFile(configPath) }
            if let reference = links.landingPage {
                landingPage = loadLandingPage(reference, site: site, configPath: configPath, readFile: readFile, findings: &findings)
            }
        }
        if servingOnly {
            return LoadedSite.servingForm(
                site: site,
                served: pool?.intern(served) ?? served,
                file: apple.file,
                assetLinks: assetLinks,
                landingPage: landingPage,
                hosted: apple.hosted,
                definedIn: definedIn
            )
        }
        return LoadedSite(
            site: site,
            document: apple.document,
            served: pool?.intern(served) ?? served,
            file: apple.file,
            verbatimRoot: apple.verbatimRoot,
            assetLinks: assetLinks,
            landingPage: landingPage,
            definedIn: definedIn
        )
    }

    /// The site's landing page template, read and parsed; its problems are findings in the template file.
    static func loadLandingPage(
        _ reference: Located<String>,
        site: Site,
        configPath: String,
        readFile: ConfigLoader.FileReader,
        findings: inout [Diagnostic]
    ) -> LoadedSite.LandingPage {
        let path = ConfigLoader.resolve(reference.value, relativeTo: configPath)
        guard let bytes = readHosted(path, reference, what: "landing page", site: site, configPath: configPath, readFile, &findings) else {
            return LoadedSite.LandingPage(file: path, bytes: [], template: nil)
        }
        switch LandingPageTemplate.parse(bytes) {
        case .success(let template):
            return LoadedSite.LandingPage(file: path, bytes: bytes, template: template)
        case .failure(let problems):
            findings += problems.all.map { Diagnostic(.error, $0.rule, $0.message, at: $0.location, file: path) }
            return LoadedSite.LandingPage(file: path, bytes: bytes, template: nil)
        }
    }

    /// A site's AASA document as built: what is served and what it says.
    struct AppleDocument {
        var document: AASADocument?
        /// Made once where it is written (a generated document) or read, not copied again for serving.
        var bytes: ImmutableBytes
        /// The hosted file, resolved against the config's directory.
        var file: String?
        var verbatimRoot: JSONNode?
        /// A hosted file checked without a finding, or kept so by a snapshot (serving loads only).
        var hosted: HostedDocument?
    }

    /// The site's Android statement list: generated from its apps, or a hosted file read and checked.
    static func loadAssetLinks(
        _ site: Site,
        configPath: String,
        readFile: ConfigLoader.FileReader,
        findings: inout [Diagnostic]
    ) -> LoadedSite.AssetLinks? {
        switch site.android {
        case nil: return nil
        case .generated(let apps):
            let statements = AssetLinksGenerator.statements(for: apps)
            return LoadedSite.AssetLinks(
                bytes: JSONWriter.bytes(AssetLinksGenerator.render(statements)),
                statements: statements,
                file: nil,
                verbatimRoot: nil
            )
        case .file(let reference):
            let path = ConfigLoader.resolve(reference.value, relativeTo: configPath)
            guard let bytes = readHosted(path, reference, what: "assetlinks", site: site, configPath: configPath, readFile, &findings)
            else {
                return LoadedSite.AssetLinks(bytes: [], statements: nil, file: path, verbatimRoot: nil)
            }
            let parsed = JSONParser.parse(bytes, duplicateKeys: .warning)
            var fileFindings = parsed.diagnostics
            var statements: [AssetStatement]?
            if let root = parsed.root {
                let decoded = AssetLinksDecoder.decode(root)
                fileFindings += decoded.diagnostics
                statements = decoded.statements
            }
            findings += fileFindings.inFile(path)
            return LoadedSite.AssetLinks(bytes: bytes, statements: statements, file: path, verbatimRoot: parsed.root)
        }
    }

    /// A file a site hosts verbatim; nil (with the finding) when it cannot be read.
    static func readHosted(
        _ path: String,
        _ reference: Located<String>,
        what: String,
        site: Site,
        configPath: String,
        _ readFile: ConfigLoader.FileReader,
        _ findings: inout [Diagnostic]
    ) -> [UInt8]? {
        switch readFile(path) {
        case .success(let bytes): return bytes
        case .failure(let error):
            findings.append(
                Diagnostic(
                    .error,
                    "file.unreadable",
                    "cannot read the \(what) file \"\(path)\" for site \(site.name): \(error.message)",
                    at: reference.origin.location,
                    path: reference.origin.path.description,
                    file: configPath
                )
            )
            return nil
        }
    }

    /// What the AASA paths serve for the site.
    static func loadApple(
        _ site: Site,
        configPath: String,
        readFile: ConfigLoader.FileReader,
        findings: inout [Diagnostic],
        hostedDocuments: HostedDocumentLookup? = nil,
        keepsDocument: Bool = true
    ) -> AppleDocument {
        switch site.source {
        case .none:
            return AppleDocument(document: nil, bytes: .empty, file: nil, verbatimRoot: nil)
        case .generated(let generated):
            let output = Generator.document(for: generated)
            var siteFindings = output.diagnostics
            let validation = AASAValidator.validate(output.document)
            if !validation.isEmpty { siteFindings += validation }
            if let appclips = generated.appclips, !appclips.isEmpty, let finding = appclipsOnWildcardHost(site, generated.appclipsOrigin) {
                siteFindings.append(finding)
            }
            let bytes = AASARenderer.immutableBytes(output.document)
            // The breakdown costs a second rendering, so only documents near the limit pay for it.
            let size = AASAValidator.validateSize(
                bytes.count,
                contributors: bytes.count >= AASAValidator.sizeWarningThreshold ? AASAValidator.sizeContributors(output.document) : [],
                origin: site.origin
            )
            if !size.isEmpty { siteFindings += size }
            if !siteFindings.isEmpty { findings += siteFindings.inFile(configPath) }
            // A served site keeps only its bytes; the document stays for the command line and for link rules,
            // which are checked against it (a copy of it retains every rule's references).
            return AppleDocument(document: keepsDocument ? output.document : nil, bytes: bytes, file: nil, verbatimRoot: nil)

        case .file(let reference):
            let path = ConfigLoader.resolve(reference.value, relativeTo: configPath)
            guard let bytes = readHosted(path, reference, what: "AASA", site: site, configPath: configPath, readFile, &findings) else {
                return AppleDocument(document: nil, bytes: .empty, file: path, verbatimRoot: nil)
            }
            // Link rules are checked against the document's components: only a site without them can do
            // with what the snapshot kept.
            let digest = hostedDocuments != nil && site.links == nil ? CompiledSites.Digest(bytes) : nil
            if let digest, let kept = hostedDocuments?.kept(digest) {
                if kept.hasAppClips, let finding = appclipsOnWildcardHost(site, hostedIn: path) { findings += [finding].inFile(configPath) }
                return AppleDocument(document: nil, bytes: ImmutableBytes.copy(bytes), file: path, verbatimRoot: nil, hosted: kept)
            }
            var fileFindings: [Diagnostic] = []
            var document: AASADocument?
            var verbatimRoot: JSONNode?
            // A load that keeps only the bytes takes a document of the common shape without its JSON tree, when
            // nothing is found in it; anything else is parsed, and every finding reported where it was written.
            if !keepsDocument, let checked = DirectAASADecoder.checked(bytes) {
                document = checked
            } else {
                let parsed = JSONParser.parse(bytes, duplicateKeys: .warning)
                fileFindings = parsed.diagnostics
                verbatimRoot = parsed.root
                if let root = parsed.root {
                    let decoded = AASADecoder.decode(root)
                    fileFindings += decoded.diagnostics
                    document = decoded.document
                    if let document { fileFindings += AASAValidator.validate(document) }
                }
                fileFindings += AASAValidator.validateSize(bytes.count, of: document)
            }
            let hasAppClips = document?.appclips.map({ !$0.apps.isEmpty }) == true
            if hasAppClips, let finding = appclipsOnWildcardHost(site, hostedIn: path) {
                findings += [finding].inFile(configPath)
            }
            findings += fileFindings.inFile(path)
            let served = ImmutableBytes.copy(bytes)
            var hosted: HostedDocument?
            if fileFindings.isEmpty, document != nil, let digest, let hostedDocuments {
                hosted = HostedDocument(
                    digest: digest,
                    hasAppClips: hasAppClips,
                    gzip: GzipForm(of: served, compress: hostedDocuments.compress),
                    restored: false
                )
            }
            return AppleDocument(
                document: document,
                bytes: served,
                file: path,
                verbatimRoot: verbatimRoot,
                hosted: hosted
            )
        }
    }

    /// App Clip associated domains cannot be wildcards (docs/aasa-format.md §6): one finding for a
    /// site that serves appclips on a wildcard host, at the appclips key when the config wrote them,
    /// else at the wildcard host (the appclips are in the hosted file).
    static func appclipsOnWildcardHost(_ site: Site, _ appclipsOrigin: Provenance? = nil, hostedIn file: String? = nil) -> Diagnostic? {
        guard let wildcard = site.hosts.first(where: { $0.value.isWildcard }) else { return nil }
        let origin = appclipsOrigin ?? wildcard.origin
        let subject = file.map { "\"\($0)\" has \"appclips\" but is" } ?? "\"appclips\" is"
        return Diagnostic(
            .error,
            "appclips.wildcard-host",
            "\(subject) served on the wildcard host \"\(wildcard.value)\", but App Clip associated domains cannot be "
                + "wildcards; move appclips to a site with exact hosts",
            at: origin.location,
            path: origin.path.description
        )
    }
}
