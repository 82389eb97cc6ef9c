import AASA
public import FetchRecords
import LinkStore
import Posix
import Synchronization

/// The fetch records of this server: the supervisor collects the loops' fetches into a ledger the admin
/// listener reads (`/status`, the console), notes each new version of a fetched host's documents, and
/// keeps both: in the PostgreSQL database replicas share when the config names one (every replica then
/// sees every replica's records), else in the state directory when there is one, else in memory only.
/// Nothing here runs on an event loop but the reading of the ledger for an admin request.
final class FetchLog: Sendable {
    private let ledger: Mutex<FetchLedger>
    private let store: Mutex<RecordStore?>
    /// With `server.linkStore.postgres`: the records of every replica.
    let database: FetchRecordDatabase?
    /// Called for each fetch, after it is recorded (`dev` prints a line when the phone fetched).
    private let onFetch: (@Sendable (FetchRecord, HostStatus) -> Void)?

    init(
        settings: ServerSettings,
        snapshot: Snapshot,
        configPath: String,
        onFetch: (@Sendable (FetchRecord, HostStatus) -> Void)? = nil
    ) {
        self.onFetch = onFetch
        var ledger = FetchLedger(
            limit: settings.fetchHistory,
            maxHosts: settings.fetchHosts,
            maxHostsPerWildcard: settings.fetchHostsPerWildcard
        )
        var store: RecordStore?
        database = Self.database(settings: settings, configPath: configPath)
        if let database {
            Log.info("fetch records in \(database.location), shared by every replica")
        } else if let directory = settings.stateDirectory {
            let path = ConfigLoader.resolve(directory, relativeTo: configPath)
            let read = RecordStore.read(directory: path, limit: settings.fetchHistory, maxHosts: settings.fetchHosts)
            ledger = FetchLedger(
                limit: settings.fetchHistory,
                maxHosts: settings.fetchHosts,
                maxHostsPerWildcard: settings.fetchHostsPerWildcard
            )
            ledger.merge(read.ledger)
            // The files do not say which wildcard served a host: the config in force does.
            ledger.regroup(wildcardServing: snapshot.wildcard(serving:))
            for warning in read.warnings { Log.warning("fetch records: \(warning)") }
            do {
                let opened = try RecordStore(directory: path, replica: "\(Posix.hostName())-\(Posix.processID())")
                opened.markAlive()
                Self.report(compacted: opened.compact())
                store = opened
                let hosts = ledger.hosts.count
                Log.info("fetch records in \(path): \(hosts) host\(hosts == 1 ? "" : "s") read back")
            } catch {
                Log.warning("fetch records: cannot use the state directory \(path) (\(error)); keeping them in memory only")
            }
        }
        self.ledger = Mutex(ledger)
        self.store = Mutex(store)
    }

    /// The database the config's short links are kept in, when it is PostgreSQL; nil otherwise, and
    /// (logged) when its password file cannot be read.
    private static func database(settings: ServerSettings, configPath: String) -> FetchRecordDatabase? {
        guard settings.linkStorePostgres != nil else { return nil }
        do throws(LinkStoreError) {
            guard case .postgres(let login)? = try LinkStoreLocation.configured(settings, configPath: configPath) else { return nil }
            return FetchRecordDatabase(
                login: login,
                replica: "\(Posix.hostName())-\(Posix.processID())",
                history: settings.fetchHistory,
                maxHosts: settings.fetchHosts
            )
        } catch {
            Log.warning("fetch records: \(error); keeping them in memory only")
            return nil
        }
    }

    /// Starts sharing records through the database (nothing without one); `snapshot` gives the generation
    /// in force, which says which wildcard serves another replica's host.
    func startSharing(snapshot: @escaping @Sendable () -> Snapshot) {
        database?.start { [self] entries in absorb(entries, snapshot: snapshot()) }
    }

    func stopSharing() { database?.stop() }

    /// Other replicas' records, read from the database: folded in as this replica's own are (repeats
    /// dropped), without being written again.
    func absorb(_ entries: [RecordLine.Entry], snapshot: Snapshot) {
        ledger.withLock { ledger in
            for entry in entries {
                switch entry {
                case .fetch(let fetch):
                    ledger.add(fetch, wildcard: ledger.hosts[fetch.host] == nil ? snapshot.wildcard(serving: fetch.host) : nil)
                case .version(let version):
                    ledger.add(version, wildcard: ledger.hosts[version.host] == nil ? snapshot.wildcard(serving: version.host) : nil)
                }
            }
        }
    }

    private let housekeeping = Mutex<(alive: Int64, compacted: Int64)>((0, 0))

    /// On the supervisor's loop: says this replica is alive every minute, and folds gone replicas' files
    /// into its own every hour.
    func tick(now: Int64) {
        releaseDroppedMemory(dropped: false)
        let due = housekeeping.withLock { times -> (alive: Bool, compact: Bool) in
            let alive = now - times.alive >= 60_000
            let compact = times.compacted == 0 || now - times.compacted >= 3_600_000
            if alive { times.alive = now }
            if compact { times.compacted = now }
            return (alive, compact)
        }
        guard due.alive || due.compact else { return }
        store.withLock { store in
            guard let store else { return }
            if due.alive { store.markAlive() }
            if due.compact { Self.report(compacted: store.compact()) }
        }
    }

    private static func report(compacted: [String]) {
        guard !compacted.isEmpty else { return }
        Log.info(
            "fetch records: merged the records of \(compacted.count) replica\(compacted.count == 1 ? "" : "s") gone for over an hour "
                + "(\(compacted.prefix(5).joined(separator: ", "))\(compacted.count > 5 ? ", …" : "")) into this one's file"
        )
    }

    /// A copy of the ledger, for an admin request.
    var current: FetchLedger { ledger.withLock { $0 } }

    /// Hosts dropped to stay within `server.fetchHosts`, and within `server.fetchHostsPerWildcard`.
    var droppedHosts: (overall: Int, underWildcards: Int) { ledger.withLock { ($0.droppedHosts, $0.droppedUnderWildcards) } }

    /// Google's verifier checked by reverse DNS, per address (true: confirmed); bounded, as addresses are
    /// what a client chooses.
    private let reverseDNSAnswers = Mutex<[String: Bool]>([:])

    /// A Google fetch from outside the configured networks, checked by forward-confirmed reverse DNS here,
    /// on the supervisor (never a loop); a few new addresses per collection, two seconds each at most.
    private func confirmingGoogle(_ fetches: [FetchRecord]) -> [FetchRecord] {
        var lookups = 0
        return fetches.map { fetch in
            guard fetch.fetcher == .googleVerifier, fetch.origin == .claimed else { return fetch }
            var confirmed = reverseDNSAnswers.withLock { $0[fetch.client] }
            if confirmed == nil, lookups < 4 {
                lookups += 1
                let answer = ReverseDNSCheck.confirms(
                    fetch.client,
                    reverse: { Posix.reverseLookup($0, timeoutMilliseconds: 2_000) },
                    forward: { (try? Posix.resolve($0, timeoutMilliseconds: 2_000).get()) ?? [] }
                )
                reverseDNSAnswers.withLock { answers in
                    if answers.count >= 4_096 { answers.removeAll(keepingCapacity: true) }
                    answers[fetch.client] = answer
                }
                confirmed = answer
            }
            var checked = fetch
            if confirmed == true { checked.origin = .verified }
            return checked
        }
    }

    /// Records fetches the loops answered from `snapshot`'s generation or one before it.
    func collect(_ fetches: [FetchRecord], snapshot: Snapshot) {
        guard !fetches.isEmpty else { return }
        let fetches = confirmingGoogle(fetches)
        var written: [RecordLine.Entry] = []
        var recorded: [(FetchRecord, HostStatus)] = []
        var overall = (before: 0, after: 0, bound: 0)
        var underWildcards = (before: 0, after: 0, bound: 0)
        ledger.withLock { ledger in
            overall.before = ledger.droppedHosts
            underWildcards.before = ledger.droppedUnderWildcards
            defer {
                overall = (overall.before, ledger.droppedHosts, ledger.maxHosts)
                underWildcards = (underWildcards.before, ledger.droppedUnderWildcards, ledger.maxHostsPerWildcard)
            }
            for fetch in fetches {
                let wildcard = ledger.hosts[fetch.host] == nil ? snapshot.wildcard(serving: fetch.host) : nil
                // The version a host's first recorded fetch got starts its history.
                if ledger.hosts[fetch.host] == nil, let version = snapshot.version(of: fetch.host, fetch.document),
                    version.version == fetch.version, ledger.add(version, wildcard: wildcard)
                {
                    written.append(.version(version))
                }
                if ledger.add(fetch, wildcard: wildcard) { written.append(.fetch(fetch)) }
                if onFetch != nil, let history = ledger.hosts[fetch.host] {
                    recorded.append((fetch, status(fetch.host, history: history, snapshot: snapshot)))
                }
            }
        }
        save(written)
        // The first time, then every 10,000: enough to notice, never a line per made-up subdomain.
        for (dropped, setting, scope) in [
            (overall, "server.fetchHosts", ""), (underWildcards, "server.fetchHostsPerWildcard", " under one wildcard site"),
        ] where dropped.after > dropped.before && (dropped.before == 0 || dropped.after / 10_000 > dropped.before / 10_000) {
            Log.warning(
                "fetch records: \(dropped.after) host\(dropped.after == 1 ? "" : "s") dropped so far to keep at most \(setting) = "
                    + "\(dropped.bound)\(scope) (those fetched longest ago go first)"
            )
        }
        for (fetch, status) in recorded { onFetch?(fetch, status) }
        if overall.after > overall.before || underWildcards.after > underWildcards.before { releaseDroppedMemory(dropped: true) }
    }

    /// When memory was last handed back, and whether hosts were dropped since.
    private let trim = Mutex<(last: Int64, pending: Bool)>((0, false))

    /// Dropped histories are freed, but glibc keeps their pages: without handing them back, a flood of
    /// made-up subdomains would leave the process at the flood's peak. At most every 5 s (it walks the
    /// heap); `tick` hands back what the last drops of a flood left.
    private func releaseDroppedMemory(dropped: Bool) {
        let now = Posix.monotonicMilliseconds()
        let due = trim.withLock { trim -> Bool in
            if dropped { trim.pending = true }
            guard trim.pending, now - trim.last >= 5_000 else { return false }
            trim = (now, false)
            return true
        }
        if due { Posix.releaseFreeMemory() }
    }

    /// A new generation is served: each recorded host whose document changed gets its new version.
    func published(_ snapshot: Snapshot) {
        var written: [RecordLine.Entry] = []
        ledger.withLock { ledger in
            // A wildcard added or removed moves hosts between the per-wildcard bounds.
            ledger.regroup(wildcardServing: snapshot.wildcard(serving:))
            for host in ledger.hosts.keys {
                for document in DocumentKind.allCases {
                    guard let version = snapshot.version(of: host, document) else { continue }
                    if ledger.add(version, always: false) { written.append(.version(version)) }
                }
            }
        }
        save(written)
    }

    /// Of the hosts with fetch records, how many Apple's CDN last fetched at the version served now, and
    /// how many at an earlier one (the console's summary). The records are read outside the lock: the
    /// dictionary is shared, not copied, until the next fetch changes it.
    func appleSummary(snapshot: Snapshot) -> (current: Int, earlier: Int) {
        let hosts = ledger.withLock { $0.hosts }
        var current = 0
        var earlier = 0
        for (host, history) in hosts {
            guard let state = status(host, history: history, snapshot: snapshot).fetchers.first(where: { $0.fetcher == .appleCDN }),
                let got = state.gotCurrent
            else { continue }
            if got { current += 1 } else { earlier += 1 }
        }
        return (current, earlier)
    }

    func status(_ host: String, snapshot: Snapshot) -> HostStatus {
        let history = ledger.withLock { $0.hosts[host] } ?? HostHistory()
        return status(host, history: history, snapshot: snapshot)
    }

    private func status(_ host: String, history: HostHistory, snapshot: Snapshot) -> HostStatus {
        var current: [DocumentKind: VersionRecord] = [:]
        for document in DocumentKind.allCases { current[document] = snapshot.version(of: host, document) }
        return HostStatus(host: host, current: current, cacheControl: snapshot.cacheControl, history: history)
    }

    private func save(_ entries: [RecordLine.Entry]) {
        guard !entries.isEmpty else { return }
        if let database { return database.add(entries) }
        store.withLock { store in
            guard let writer = store else { return }
            do {
                try writer.append(entries)
            } catch {
                Log.warning("fetch records: cannot write to \(writer.file) (\(error)); keeping them in memory only")
                store = nil
            }
        }
    }
}

extension Snapshot {
    /// The wildcard site serving `host` when no exact host does.
    func wildcard(serving host: String) -> String? { hosts.wildcard(serving: HostTable<Int>.normalize(host)) }

    /// The version `host` is served now (its ETag value) and when it started being served; nil when
    /// the config does not serve that document for the host.
    func version(of host: String, _ document: DocumentKind) -> VersionRecord? {
        guard let position = hosts.lookup(normalized: HostTable<Int>.normalize(host)) else { return nil }
        let site = site(at: position)
        let hash: UInt64
        let since: Int
        switch document {
        case .aasa:
            guard site.servesApple else { return nil }
            hash = site.bodyHash
            since = site.lastModified
        case .assetLinks:
            guard let assetLinks = site.assetLinks else { return nil }
            hash = assetLinks.bodyHash
            since = site.assetLinksLastModified
        }
        return VersionRecord(host: host, document: document, version: FNV1a.hex(hash), since: since * 1000)
    }
}

/// How a server keeps its fetch records: where relative state directories are found, and who hears
/// of each fetch as it is recorded.
public struct FetchRecording: Sendable {
    public var configPath: String
    public var onFetch: (@Sendable (FetchRecord, HostStatus) -> Void)?

    public init(configPath: String, onFetch: (@Sendable (FetchRecord, HostStatus) -> Void)? = nil) {
        self.configPath = configPath
        self.onFetch = onFetch
    }
}
