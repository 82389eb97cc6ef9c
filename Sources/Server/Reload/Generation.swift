public import AASA
import Posix
import Synchronization

/// How a generation is made: read the inputs into a candidate (the config with its documents, certificates
/// and admin policy, every finding), then — when it has no errors — build what is served from it. Pure
/// over its inputs: file access goes through the readers in ``GenerationInputs``, so it is tested with
/// fixtures in memory. Both reuse passes happen here: the loader takes the previous generation's unchanged
/// sites over, and the snapshot its unchanged prepared responses.
public enum Generation {
    /// A config as read, with what its certificates and files add: what `validate` reports and `serve`
    /// decides on.
    public struct Candidate: Sendable {
        public var config: LoadedConfig
        var certificates: CertificateSet
        var adminPolicy: AdminPolicy
        /// The config's findings, the certificates' and the admin token's.
        public var diagnostics: [Diagnostic]
        /// The config, every hosted document, certificate and key, and the admin token: what a reload reads.
        public var files: [String]
        /// The bytes of every file read, to quote their lines in findings (none when serving).
        public var sources: [String: [UInt8]]
        public var microseconds: Int
        /// Where the config was read from: its modification time stamps the first load's documents.
        public var configPath: String

        /// The server settings in force for this config (after the caller's adjustments).
        public var settings: ServerSettings { config.config?.server ?? ServerSettings() }
    }

    /// The first generation, from a candidate the caller has already reported (or why it cannot serve).
    public static func first(_ candidate: Candidate) -> Result<ServedGeneration, RejectedReload> {
        next(from: nil, candidate: candidate, now: Posix.unixTime())
    }

    /// The next generation: `inputs` read into a candidate (taking `previous`'s unchanged sites over), then
    /// served if it has no errors.
    static func next(from previous: ServedGeneration?, inputs: GenerationInputs) -> Result<ServedGeneration, RejectedReload> {
        next(from: previous, candidate: load(inputs, reusing: previous), now: inputs.now)
    }

    /// Reads everything `inputs` names and checks it. Errors are findings, never a throw: `validate`
    /// reports them all.
    public static func load(_ inputs: GenerationInputs, reusing previous: ServedGeneration? = nil) -> Candidate {
        let started = Posix.monotonicMicroseconds()
        let options = inputs.options
        // Every file read is kept for quoting, unless serving (which quotes nothing).
        let recorder = options.servingOnly ? nil : ReadRecorder()
        let readFile: GenerationInputs.FileReader = { path, limit in
            let result = inputs.readFile(path, limit)
            if let recorder, case .success(let bytes) = result { recorder.files.withLock { $0[path] = bytes } }
            return result
        }
        var config = ConfigLoader.load(
            configBytes: inputs.configBytes,
            configPath: inputs.configPath,
            readFile: { readFile($0, Posix.ReadLimit.document) },
            reusing: previous?.config,
            parallel: { Posix.parallelFor($0, $1) },
            servingOnly: options.servingOnly,
            includes: inputs.includes,
            compiled: options.compiledSites?.input
        )
        if let server = config.config?.server { config.config?.server = options.adjustSettings(server) }
        if options.forDevelopment {
            config.diagnostics = config.diagnostics.map { finding in
                var finding = finding
                if finding.rule == "appid.placeholder" { finding.severity = .warning }
                return finding
            }
        }
        var diagnostics = config.diagnostics
        var certificates = CertificateSet.none
        var adminPolicy = AdminPolicy()
        var secretFiles: [String] = []
        // Checked even when other parts have errors: one run reports everything it can.
        if let settings = config.config?.server, let provide = inputs.certificates.provide {
            certificates = provide(
                CertificateSupply.Request(
                    settings: settings,
                    configPath: inputs.configPath,
                    sites: config.sites,
                    now: Int(inputs.now),
                    readFile: readFile
                )
            )
            diagnostics += certificates.diagnostics
            let admin = AdminPolicy.read(settings, configPath: inputs.configPath, readFile: readFile)
            adminPolicy = admin.policy
            diagnostics += admin.diagnostics
            secretFiles = admin.files
        }
        // Include patterns are watched as patterns: a tenant file added later is seen too.
        var files = [inputs.configPath] + config.includePatterns + config.sites.hostedFiles + certificates.files + secretFiles
        var seen = Set<String>()
        files.removeAll { !seen.insert($0).inserted }
        var sources = recorder?.files.withLock { $0 } ?? [:]
        if recorder != nil { sources[inputs.configPath] = inputs.configBytes }
        return Candidate(
            config: config,
            certificates: certificates,
            adminPolicy: adminPolicy,
            diagnostics: diagnostics,
            files: files,
            sources: sources,
            microseconds: Int(Posix.monotonicMicroseconds() - started),
            configPath: inputs.configPath
        )
    }

    /// What is served from `candidate`, replacing `previous`; or why it cannot be. The settings a running
    /// server cannot change keep their running values and are named; unchanged documents keep their
    /// prepared responses and Last-Modified; certificates absent from the candidate stay as they were.
    static func next(from previous: ServedGeneration?, candidate: Candidate, now: Double) -> Result<ServedGeneration, RejectedReload> {
        let errors = candidate.diagnostics.filter { $0.severity == .error }
        guard errors.isEmpty else {
            return .failure(RejectedReload(generation: previous?.number ?? 0, errors: Array(errors.sortedForDisplay().prefix(10))))
        }
        let (settings, needsRestart) =
            previous.map { SettingsReload.apply(candidate.settings, over: $0.settings) } ?? (candidate.settings, [])
        let number = (previous?.number ?? 0) + 1
        let snapshot = Snapshot(
            config: candidate.config,
            settings: settings,
            tls: candidate.certificates.contexts ?? previous?.snapshot.tls,
            adminPolicy: candidate.adminPolicy,
            generation: number,
            now: now,
            previous: previous?.snapshot,
            firstStamps: previous == nil ? firstLoadStamps(candidate, settings: settings) : nil
        )
        let fingerprint = candidate.certificates.fingerprint
        return .success(
            ServedGeneration(
                number: number,
                config: candidate.config,
                snapshot: snapshot,
                settings: settings,
                certificateFingerprint: fingerprint ?? previous?.certificateFingerprint,
                files: candidate.files,
                loadMicroseconds: candidate.microseconds,
                needsRestart: needsRestart,
                certificatesReplaced: previous != nil && fingerprint != nil && fingerprint != previous?.certificateFingerprint,
                acmeHosts: candidate.certificates.acmeHosts
            )
        )
    }

    /// File times for every document of the first load, and the first-served times the state directory
    /// kept for the versions still served.
    static func firstLoadStamps(_ candidate: Candidate, settings: ServerSettings) -> FirstLoadStamps? {
        guard var stamps = FirstLoadStamps(configPath: candidate.configPath) else { return nil }
        if let directory = settings.stateDirectory {
            let path = ConfigLoader.resolve(directory, relativeTo: candidate.configPath)
            stamps.record(RecordStore.read(directory: path, limit: settings.fetchHistory).ledger, config: candidate.config)
        }
        return stamps
    }

    /// Every file a load read, gathered from the threads that read them.
    private final class ReadRecorder: Sendable {
        let files = Mutex<[String: [UInt8]]>([:])
    }
}
