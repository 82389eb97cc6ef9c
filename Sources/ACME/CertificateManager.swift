public import AASA
import HTTP1
import HTTPClient
import Posix
import Support
import Synchronization
public import TLS

/// Certificates the server obtains and renews itself: which hosts need one, the queue of orders run by a
/// few worker threads (never an event loop), renewals, on-demand issuance started by handshakes, and a
/// bounded cache of ready certificates loaded from storage when a handshake first needs them. Whatever
/// the CA does, what is already stored keeps being served.
public final class CertificateManager: ObtainedCertificates, @unchecked Sendable {
    public enum Level: Sendable { case info, warning }

    /// The listeners, which decide the challenge types that can work.
    public struct Listeners: Sendable {
        public var plain: Bool
        public var tls: Bool
        public init(plain: Bool, tls: Bool) {
            self.plain = plain
            self.tls = tls
        }
    }

    /// What the operator view reports for one host.
    public struct Counters: Sendable, Equatable {
        public var ordersStarted = 0
        public var ordersFailed = 0
        public var ordersSucceeded = 0
        public var badNonces = 0
        /// Certificates ready in memory.
        public var cached = 0
        /// Orders waiting for a worker (renewals and first orders).
        public var queued = 0
        /// First orders dropped because their queue was full.
        public var dropped = 0
        /// Times the first-order queue waited for the rate limits.
        public var rateLimited = 0
        /// Hosts whose order waits for another replica holding its lock.
        public var waitingOnLock = 0
        /// Hosts backing off after a failure (not ordered before a time to come).
        public var backingOff = 0
    }

    let settings: ACMESettings
    let storage: CertificateStorage
    let board: ChallengeBoard
    let http: HTTPClient
    let challengeTypes: [ACMESettings.Challenge]
    let hmacKeyFile: String?
    let owner: String
    let log: @Sendable (Level, String) -> Void
    /// Ready certificates kept in memory; the rest are read from storage when a handshake needs them.
    let cacheCapacity: Int
    private let state: Mutex<State>
    private let account = Mutex<(key: SigningKey, url: String)?>(nil)
    private let wake: EventFD
    private let loaderWake: EventFD
    private var threads: [Posix.Thread] = []
    /// Told when a certificate a handshake may wait for is ready, or will not come (the server wakes its
    /// event loops, which step their suspended handshakes again).
    private let listeners = Mutex<[@Sendable () -> Void]>([])
    /// Names waiting to be read from the storage at most: a flood of made-up names is answered "none".
    static let loadCapacity = 10_000

    struct Cached {
        var certificate: ServerCertificate
        var stamp: String?
        var checkedAt: Int64
        var lastUse: Int64
    }

    struct Schedule {
        var notAfter: Int
        var renewAt: Int
        /// When to ask the CA for renewal information again; `Int.max` when it offers none.
        var renewalInfoAt: Int
        init(_ meta: StoredMeta) {
            notAfter = meta.notAfter
            renewAt = meta.renewAt
            renewalInfoAt = meta.renewalID == nil ? Int.max : meta.renewalInfoAt ?? 0
        }
    }

    struct State {
        var cache: [String: Cached] = [:]
        /// Names the decision allows with nothing in storage, not looked up again before the time given
        /// (monotonic ms). Refused names are never here: the decision is made anew for them, and costs a
        /// hash lookup.
        var nothingStored: [String: Int64] = [:]
        var inputs = IssuanceDecision.Inputs()
        /// Set by the first `update`: until then every name would look unserved, and nothing is removed.
        var configured = false
        var configHosts: Set<String> { inputs.configHosts }
        /// Stored certificates this replica knows of, for renewal and expiry metrics: two numbers per host,
        /// so 100,000 stored certificates cost a few megabytes (the rest of their meta is read when renewing).
        var known: [String: Schedule] = [:]
        var failures: [String: Int] = [:]
        /// No attempt before this Unix time.
        var notBefore: [String: Int] = [:]
        var queue: OrderQueue
        /// When a full first-order queue was last reported (Unix seconds), and drops since.
        var lastDropReport = 0
        /// Queued or being worked on.
        var busy: Set<String> = []
        /// Being worked on by a worker now.
        var running: Set<String> = []

        /// Whether a handshake for `key` should wait for its order: one is running, or queued and about to
        /// start (one queued behind the rate limits may wait hours).
        func orderComing(_ key: String) -> Bool {
            running.contains(key) || (busy.contains(key) && queue.startsSoon(key, now: Int(Posix.unixTime())))
        }
        /// Config hosts still to be looked up in storage.
        var unchecked: [String] = []
        var counters = Counters()
        var lastError: [String: String] = [:]
        /// Issued but not stored yet (the storage failed): served from memory, stored at the next attempt
        /// instead of ordering again.
        var unstored: [String: OrderProcedure.Issued] = [:]
        /// Asked to retry while an order for them was running: queued again when it ends.
        var retryRequested: Set<String> = []
        /// Names a handshake asked for that are not in memory: read from the storage by the loader thread,
        /// never on an event loop. Bounded; the set says what is queued or being read.
        var loads: [String] = []
        var loading: Set<String> = []
        /// Found another replica's lock on them at their last attempt.
        var waitingOnLock: Set<String> = []
        var stopping = false

        init(queue: OrderQueue) { self.queue = queue }
    }

    /// `trustFile`, `hmacKeyFile`: resolved paths. `userAgent` names the server to the CA. `storage`: the
    /// file system's (`FileStorage`), or any other behind the same interface.
    public init(
        settings: ACMESettings,
        storage backend: any Storage,
        trustFile: String?,
        hmacKeyFile: String?,
        listeners: Listeners,
        userAgent: String,
        cacheCapacity: Int = 1_000,
        log: @escaping @Sendable (Level, String) -> Void
    ) throws(ACMEError) {
        self.settings = settings
        let limits = OrderQueue.Limits(
            perHour: settings.ordersPerHour,
            perDomainPerWeek: settings.ordersPerDomainPerWeek,
            capacity: 10_000
        )
        state = Mutex(State(queue: OrderQueue(limits: limits, now: Int(Posix.unixTime()))))
        storage = CertificateStorage(backend: backend, directoryURL: settings.directory)
        board = ChallengeBoard(storage: backend)
        do {
            http = try HTTPClient(extraAnchors: trustFile.map { [$0] } ?? [], userAgent: userAgent)
            wake = try EventFD()
            loaderWake = try EventFD()
        } catch {
            throw .local("cannot prepare ACME: \(error)")
        }
        var types = settings.challenges ?? ([.http01, .tlsALPN01] + (settings.dnsHook != nil ? [.dns01] : []))
        types.removeAll { ($0 == .http01 && !listeners.plain) || ($0 == .tlsALPN01 && !listeners.tls) }
        challengeTypes = types
        self.hmacKeyFile = hmacKeyFile
        owner = "\(Posix.hostName()) pid \(Posix.processID())"
        self.cacheCapacity = max(1, cacheCapacity)
        self.log = log
    }

    // MARK: - Called by the server

    /// Starts the scheduler and the order workers; reads what storage already holds.
    public func start() throws(ACMEError) {
        board.start()
        do {
            threads.append(try Posix.Thread { [self] in scheduleLoop() })
            threads.append(try Posix.Thread { [self] in loadLoop() })
            for _ in 0..<settings.maxConcurrentOrders { threads.append(try Posix.Thread { [self] in workLoop() }) }
        } catch {
            throw .local("cannot start the ACME threads: \(error)")
        }
    }

    public func stop() {
        state.withLock { $0.stopping = true }
        for _ in threads { wake.signal() }
        loaderWake.signal()
        for thread in threads { thread.join() }
        threads = []
        board.stop()
    }

    /// A new generation: the exact hosts that get certificates from the config, and which names the
    /// config serves (on-demand issuance is only for those).
    public func update(configHosts: [String], serves: @escaping @Sendable (String) -> Bool) {
        // Already decided by the config: exact hosts when `hosts` is "config", wildcards when there is a DNS hook.
        let hosts = Set(configHosts.compactMap { try? CertificateName.normalize($0, allowWildcard: true).get() })
        state.withLock { state in
            state.unchecked += hosts.subtracting(state.configHosts)
            state.inputs = IssuanceDecision.Inputs(configHosts: hosts, serves: serves, onDemand: settings.onDemand != nil)
            state.configured = true
            state.nothingStored = [:]
        }
        wake.signal()
    }

    /// What the config in force decides for `name` as it arrived: the one decision the handshake, the
    /// worker and the renewal schedule all take.
    public func decision(for name: String, origin: IssuanceDecision.Origin = .handshake) -> (name: String?, decision: IssuanceDecision) {
        let inputs = state.withLock { $0.inputs }
        return IssuanceDecision.decide(name, origin: origin, inputs)
    }

    /// The HTTP-01 key authorization for `token`, if an order waits on it.
    public func httpChallengeAnswer(token: String) -> String? { board.httpAnswer(token: token) }

    public func challengeCertificate(forServerName serverName: String) -> ServerCertificate? { board.alpnAnswer(domain: serverName) }

    public func knownExpiry(forServerName raw: String) -> Int? {
        guard case .success(let name) = CertificateName.normalize(raw) else { return nil }
        return state.withLock { state in
            let key: String
            switch IssuanceDecision.decide(normalized: name, state.inputs) {
            case .refused: return nil
            case .coveredByWildcard(let wildcard): key = wildcard
            case .configHost, .onDemand: key = name
            }
            return state.cache[key]?.certificate.notAfter ?? state.known[key]?.notAfter
        }
    }

    public var counters: Counters {
        state.withLock { state in
            var counters = state.counters
            counters.cached = state.cache.count
            counters.queued = state.queue.count
            counters.dropped = state.queue.dropped
            counters.rateLimited = state.queue.rateLimited
            counters.waitingOnLock = state.waitingOnLock.count
            let now = Int(Posix.unixTime())
            counters.backingOff = state.notBefore.values.count { $0 > now } - state.waitingOnLock.count
            return counters
        }
    }

    /// Every stored certificate this replica knows of: host and expiry (Unix seconds).
    public var expiries: [(host: String, notAfter: Int)] {
        state.withLock { state in state.known.map { ($0.key, $0.value.notAfter) } }.sorted { $0.host < $1.host }
    }

    /// Calls `listener` (on a manager thread) whenever a certificate a handshake may be waiting for is
    /// ready in memory, or found not to come.
    public func whenCertificatesChange(_ listener: @escaping @Sendable () -> Void) { listeners.withLock { $0.append(listener) } }

    private func certificatesChanged() {
        for listener in listeners.withLock({ $0 }) { listener() }
    }

    /// Whether a handshake for `raw` can go on now, should wait, or will find nothing: from memory only.
    /// A name not in memory is queued for the loader (read from the storage off the loops); an allowed
    /// on-demand name with nothing stored is queued for an order.
    public func lookup(forServerName raw: String) -> CertificateLookup {
        guard case .success(let name) = CertificateName.normalize(raw) else { return .none }
        let now = Posix.monotonicMilliseconds()
        enum Step {
            case answer(CertificateLookup)
            case load(String)
            case order(String)
        }
        let step = state.withLock { state -> Step in
            let key: String
            let decision = IssuanceDecision.decide(normalized: name, state.inputs)
            switch decision {
            case .refused: return .answer(.none)
            case .coveredByWildcard(let wildcard): key = wildcard
            case .configHost, .onDemand: key = name
            }
            if state.cache[key] != nil { return .answer(.ready) }
            if state.loading.contains(key) { return .answer(.pending) }
            if let until = state.nothingStored[key], until > now {
                // An order about to start or running (the scheduler's for a config host, or on demand).
                if state.busy.contains(key) { return .answer(state.orderComing(key) ? .pending : .none) }
                return decision == .onDemand && settings.onDemand != nil ? .order(key) : .answer(.none)
            }
            guard state.loads.count < Self.loadCapacity else { return .answer(.none) }
            state.loading.insert(key)
            state.loads.append(key)
            return .load(key)
        }
        switch step {
        case .answer(let answer): return answer
        case .load:
            loaderWake.signal()
            return .pending
        case .order(let key):
            enqueue(key)
            return state.withLock { $0.orderComing(key) } ? .pending : .none
        }
    }

    /// The loader: reads what handshakes asked for from the storage, into memory, and queues on-demand
    /// orders for allowed names with nothing stored.
    private func loadLoop() {
        while !state.withLock({ $0.stopping }) {
            let batch = state.withLock { state -> [String] in
                let batch = state.loads
                state.loads = []
                return batch
            }
            if batch.isEmpty {
                _ = Posix.wait(loaderWake.fd, for: .readable, timeoutMilliseconds: 1000)
                _ = loaderWake.drain()
                continue
            }
            for key in batch {
                let now = Posix.monotonicMilliseconds()
                let found = load(key, now: now) != nil
                let decision = state.withLock { state -> IssuanceDecision in
                    state.loading.remove(key)
                    if !found { Self.remember(nothingStored: key, until: now + 5_000, in: &state) }
                    return IssuanceDecision.decide(normalized: key, state.inputs)
                }
                // Config hosts (and their wildcards) are ordered by the scheduler, not by handshakes.
                if !found, decision == .onDemand { requestOnDemand(key) }
            }
            certificatesChanged()
        }
    }

    /// A handshake's certificate, from memory. A name the decision refuses gets nothing and touches
    /// nothing; one not in memory is queued for the loader (this handshake goes without, unless it waits
    /// through `lookup` first).
    public func certificate(forServerName raw: String) -> ServerCertificate? {
        guard case .success(let name) = CertificateName.normalize(raw) else { return nil }
        let now = Posix.monotonicMilliseconds()
        enum Step {
            case hit(ServerCertificate)
            case skip
            case look
        }
        let (decision, key, step): (IssuanceDecision, String, Step) = state.withLock { state in
            let decision = IssuanceDecision.decide(normalized: name, state.inputs)
            let key: String
            switch decision {
            case .refused: return (decision, name, .skip)
            case .coveredByWildcard(let wildcard): key = wildcard
            case .configHost, .onDemand: key = name
            }
            // Another replica may renew a cached certificate: the scheduler looks at the files every 30 s,
            // off the loops.
            if var cached = state.cache[key] {
                cached.lastUse = now
                state.cache[key] = cached
                return (decision, key, .hit(cached.certificate))
            }
            if let until = state.nothingStored[key], until > now { return (decision, key, .skip) }
            return (decision, key, .look)
        }
        if case .refused = decision { return nil }
        switch step {
        case .hit(let certificate): return certificate
        case .skip:
            if decision == .onDemand { requestOnDemand(key) }
            return nil
        case .look:
            _ = lookup(forServerName: key)
            return nil
        }
    }

    // MARK: - Cache

    /// Reads, checks and caches the stored certificate of `name`; nil when there is none or it is damaged
    /// (a damaged one is reported and ordered again, never served).
    private func load(_ name: String, now: Int64) -> ServerCertificate? {
        let stamp = storage.certificateStamp(name)
        guard stamp != nil else { return nil }
        let bytes: [UInt8]
        switch storage.readCertificate(name) {
        case .success(let read): bytes = read
        case .failure: return nil
        }
        let certificate: ServerCertificate
        do {
            certificate = try ServerCertificate(chainPEM: bytes, keyPEM: bytes)
        } catch {
            damaged(name, because: error.description)
            return nil
        }
        state.withLock { state in
            state.cache[name] = Cached(certificate: certificate, stamp: stamp, checkedAt: now, lastUse: now)
            state.nothingStored[name] = nil
            evict(&state)
        }
        return certificate
    }

    /// The config's hosts (and wildcards) with a stored certificate, loaded before their first handshake,
    /// up to the cache's capacity: their handshakes never wait on the storage.
    private func preload() {
        let hosts = state.withLock { state in state.configHosts.filter { state.known[$0] != nil && state.cache[$0] == nil } }
        let now = Posix.monotonicMilliseconds()
        for host in hosts.prefix(cacheCapacity) { _ = load(host, now: now) }
    }

    /// Every cached certificate's file, looked at: one another replica renewed is loaded here, off the
    /// loops (a file that went away keeps the certificate in memory).
    private func refreshCache() {
        let entries = state.withLock { state in state.cache.map { ($0.key, $0.value.stamp) } }
        let now = Posix.monotonicMilliseconds()
        for (host, stamp) in entries {
            let current = storage.certificateStamp(host)
            if current != nil && current != stamp { _ = load(host, now: now) }
        }
    }

    /// Keeps the cache within its capacity: of a few entries drawn at random, the least recently used goes.
    private func evict(_ state: inout State) {
        while state.cache.count > cacheCapacity {
            var victim: (String, Int64)?
            for _ in 0..<8 {
                guard let entry = state.cache.randomElement() else { break }
                if victim == nil || entry.value.lastUse < victim!.1 { victim = (entry.key, entry.value.lastUse) }
            }
            guard let victim else { break }
            state.cache[victim.0] = nil
        }
    }

    private static func remember(nothingStored name: String, until: Int64, in state: inout State) {
        if state.nothingStored.count > 100_000 { state.nothingStored = [:] }
        state.nothingStored[name] = until
    }

    private func damaged(_ host: String, because reason: String) {
        let first = state.withLock { state -> Bool in
            let first = state.lastError[host]?.hasPrefix("damaged") != true
            state.lastError[host] = "damaged certificate in storage: \(reason)"
            state.cache[host] = nil
            return first
        }
        if first {
            log(.warning, "the stored certificate for \(host) is damaged (\(reason)); not serving it, ordering a new one")
        }
        // Under the same backoff as any failure: a damaged file is not a reason to ask the CA every few seconds.
        enqueue(host)
    }

    /// What `retryNow` did.
    public enum Retry: Equatable, Sendable {
        case queued(String)
        case alreadyQueued(String)
        case refused(String)
    }

    /// An order for `raw` now, backoff forgotten (`certificates retry`, `POST /certificates/retry/HOST`):
    /// the same decision as any order, memory only (no storage access: it runs on an event loop).
    public func retryNow(_ raw: String) -> Retry {
        let (name, decision) = decision(for: raw, origin: .config)
        guard let name else { return .refused("\(raw) is not a host name") }
        let host: String
        switch decision {
        case .refused(let refusal): return .refused("\(name): \(refusal)")
        case .coveredByWildcard(let wildcard): host = wildcard
        case .configHost, .onDemand: host = name
        }
        let busy = state.withLock { state -> Bool in
            state.notBefore[host] = nil
            state.failures[host] = nil
            guard state.busy.contains(host) else { return false }
            state.retryRequested.insert(host)
            return true
        }
        if busy { return .alreadyQueued(host) }
        enqueue(host)
        return .queued(host)
    }

    // MARK: - Queue

    private func requestOnDemand(_ name: String) {
        guard settings.onDemand != nil else { return }
        enqueue(name)
    }

    /// Queues an order for `host` unless one is queued or running, or it is backing off after a failure:
    /// a renewal when a certificate is stored for it, else a first order under the rate limits.
    private func enqueue(_ host: String) {
        let now = Int(Posix.unixTime())
        let (added, report) = state.withLock { state -> (Bool, Int?) in
            guard !state.stopping, !state.busy.contains(host) else { return (false, nil) }
            if let notBefore = state.notBefore[host], notBefore > now { return (false, nil) }
            switch state.queue.enqueue(host, state.known[host] != nil ? .renewal : .first) {
            case .queued:
                state.busy.insert(host)
                return (true, nil)
            case .alreadyQueued:
                return (false, nil)
            case .dropped:
                // Once a minute, with the count: a flood of names must not flood the log too.
                guard now - state.lastDropReport >= 60 else { return (false, nil) }
                state.lastDropReport = now
                return (false, state.queue.dropped)
            }
        }
        if added { wake.signal() }
        if let report {
            log(
                .warning,
                "the queue of first orders is full (10,000 names): dropped \(host) (\(report) dropped since start); they are ordered at their next handshake"
            )
        }
    }

    private func workLoop() {
        while true {
            enum Step {
                case stop
                case order(String)
                case wait(Int32)
            }
            let step = state.withLock { state -> Step in
                if state.stopping { return .stop }
                switch state.queue.next(now: Int(Posix.unixTime())) {
                case .order(let host, _):
                    state.running.insert(host)
                    return .order(host)
                case .waitUntil(let time): return .wait(Int32(clamping: max(1, min(60, time - Int(Posix.unixTime()))) * 1000))
                case .empty: return .wait(1000)
                }
            }
            switch step {
            case .order(let host):
                obtain(host)
                let again = state.withLock { state -> Bool in
                    state.busy.remove(host)
                    state.running.remove(host)
                    guard state.retryRequested.remove(host) != nil else { return false }
                    // The retry asked for during the order: its backoff is forgotten too.
                    state.notBefore[host] = nil
                    return true
                }
                // Handshakes waiting for it step again: it is in memory now, or it will not come.
                certificatesChanged()
                if again { enqueue(host) }
            case .stop: return
            case .wait(let milliseconds): _ = Posix.wait(wake.fd, for: .readable, timeoutMilliseconds: milliseconds)
            }
        }
    }

    /// Finds new config hosts in storage, and queues what is due: renewals and retries after failures.
    private func scheduleLoop() {
        let adopted = storage.adoptLegacyCertificates()
        if adopted > 0 {
            log(
                .info,
                "moved \(adopted) stored certificate\(adopted == 1 ? "" : "s") of an earlier version under \(storage.backend.describe(storage.certificatesFolder))"
            )
        }
        var known: [String: Schedule] = [:]
        for host in storage.storedHosts() { if let meta = storage.readMeta(host) { known[host] = Schedule(meta) } }
        state.withLock { $0.known.merge(known) { _, new in new } }
        // Reading every meta file left freed buffers in this thread's malloc arena: hand them back.
        Posix.releaseFreeMemory()
        var lastSweep = 0
        var lastCleanup = 0
        var lastRefresh = 0
        var preloaded = false
        while !state.withLock({ $0.stopping }) {
            _ = Posix.wait(wake.fd, for: .readable, timeoutMilliseconds: 1000)
            _ = wake.drain()
            let now = Int(Posix.unixTime())
            let unchecked = state.withLock { state -> [String] in
                let batch = Array(state.unchecked.prefix(10_000))
                state.unchecked.removeFirst(batch.count)
                return batch
            }
            for host in unchecked {
                if let meta = storage.readMeta(host), storage.hasCertificate(host) {
                    state.withLock { $0.known[host] = Schedule(meta) }
                    if meta.renewAt <= now { enqueue(host) }
                } else {
                    if let failure = storage.readFailure(host), failure.nextAttempt > now {
                        state.withLock { $0.notBefore[host] = failure.nextAttempt }
                    }
                    enqueue(host)
                }
            }
            guard now - lastSweep >= 5 else { continue }
            lastSweep = now
            if !preloaded, state.withLock({ $0.configured }) {
                preloaded = true
                preload()
            }
            if now - lastRefresh >= 30 {
                lastRefresh = now
                refreshCache()
            }
            if now - lastCleanup >= 86_400, state.withLock({ $0.configured }) {
                lastCleanup = now
                removeUnserved(now: now)
            }
            let due = state.withLock { state -> [String] in
                let renewals = state.known.filter { $0.value.renewAt <= now && !state.busy.contains($0.key) }.map(\.key)
                let retries = state.notBefore.filter { $0.value <= now && !state.busy.contains($0.key) }.map(\.key).filter { host in
                    state.configHosts.contains(host) || state.known[host] != nil
                }
                return renewals + retries
            }
            for host in due { enqueue(host) }
            // A few per sweep: at 100,000 certificates and the usual six hours, about 5 a second.
            let askCA = state.withLock { state -> [String] in
                var hosts: [String] = []
                for (host, schedule) in state.known where schedule.renewalInfoAt <= now && !state.busy.contains(host) {
                    hosts.append(host)
                    if hosts.count == 20 { break }
                }
                return hosts
            }
            for host in askCA { refreshRenewalInfo(host, now: now) }
        }
    }

    /// RFC 9773 §4.3: the CA's renewal window of a stored certificate, asked again when its Retry-After
    /// passed (not only at issuance): a CA that moves the window earlier (a revocation coming, a mass
    /// renewal) gets the certificate renewed inside it. The new time is stored under the host's lock, only
    /// while the stored certificate is still the one asked about.
    private func refreshRenewalInfo(_ host: String, now: Int) {
        guard let meta = storage.readMeta(host), let renewalID = meta.renewalID else {
            state.withLock { $0.known[host]?.renewalInfoAt = Int.max }
            return
        }
        let window: RenewalWindow?
        do {
            window = try accountClient().renewalWindow(certificateID: renewalID)
        } catch {
            // Asked again in ten minutes; the planned renewal stands meanwhile.
            state.withLock { $0.known[host]?.renewalInfoAt = now + 600 }
            return
        }
        guard let window else {
            state.withLock { $0.known[host]?.renewalInfoAt = Int.max }
            return
        }
        var updated = meta
        updated.renewAt = RenewalPlan.renewAt(keeping: meta.renewAt, window: (window.start, window.end), random: Double.random(in: 0..<1))
        updated.renewalInfoAt = RenewalPlan.nextRenewalInfoCheck(retryAfter: window.retryAfter, now: now)
        if case .acquired(let lock) = storage.lock(host, owner: owner, timeoutSeconds: 1) {
            if storage.readMeta(host)?.renewalID == renewalID { try? storage.storeMeta(host, updated) }
            lock.release()
        }
        state.withLock { $0.known[host] = Schedule(updated) }
        if updated.renewAt != meta.renewAt {
            log(
                .info,
                "the CA's renewal information moved the renewal of \(host) to \(CivilTime(unixSeconds: updated.renewAt).isoSecond)Z "
                    + "(window \(CivilTime(unixSeconds: window.start).isoSecond)Z to \(CivilTime(unixSeconds: window.end).isoSecond)Z)"
            )
        }
        if updated.renewAt <= now { enqueue(host) }
    }

    /// How long a certificate of a host the config no longer serves stays in storage after it expires:
    /// long enough to undo a config mistake without a new order while it is valid, and to look at it after.
    public static let removalGrace = 30 * 86_400

    /// Removes the stored certificates of hosts the config does not serve any more, once they expired
    /// `removalGrace` ago (daily; under each host's lock, so no replica is renewing it meanwhile).
    private func removeUnserved(now: Int) {
        let inputs = state.withLock { $0.inputs }
        for host in storage.storedHosts() {
            // A folder with only a failure (never obtained) ends at that failure.
            guard case .refused = IssuanceDecision.decide(normalized: host, inputs),
                let ended = storage.readMeta(host)?.notAfter ?? storage.readFailure(host)?.time,
                ended + Self.removalGrace < now
            else { continue }
            guard case .acquired(let lock) = storage.lock(host, owner: owner, timeoutSeconds: 1) else { continue }
            storage.remove(host)
            lock.release()
            state.withLock { state in
                state.known[host] = nil
                state.cache[host] = nil
            }
            log(
                .info,
                "removed what was stored for \(host): the config no longer serves it, and it ended "
                    + "\(CivilTime(unixSeconds: ended).isoDay), more than \(Self.removalGrace / 86_400) days ago"
            )
        }
    }

    // MARK: - One order

    private func obtain(_ host: String) {
        let now = Int(Posix.unixTime())
        let (decision, isKnown) = state.withLock { (IssuanceDecision.decide(normalized: host, $0.inputs), $0.known[host] != nil) }
        let isConfigHost: Bool
        switch decision {
        case .configHost: isConfigHost = true
        case .onDemand: isConfigHost = false
        case .coveredByWildcard, .refused:
            // The config changed since this was queued (a host removed, a wildcard certificate asked for
            // instead): nothing is ordered, renewed or written for it.
            let wasKnown = state.withLock { state -> Bool in
                state.notBefore[host] = nil
                state.failures[host] = nil
                return state.known.removeValue(forKey: host) != nil
            }
            // Outside the lock: a handshake on an event loop may be waiting for it.
            if wasKnown { log(.info, "not renewing the certificate for \(host): \(Self.why(decision))") }
            return
        }
        // A certificate the CA already issued is stored, not ordered again.
        if let issued = state.withLock({ $0.unstored[host] }) {
            keep(host, issued, obtainedHere: false)
            return
        }
        // What is renewed: its expiry for the log, its renewal-information ID for the CA.
        let previous = isKnown ? storage.readMeta(host) : nil
        // On demand, the ask endpoint decides every order, renewals included: a customer who left is not renewed.
        if !isConfigHost, let ask = settings.onDemand?.ask {
            if let refusal = askAllows(host, ask) {
                fail(host, ACMEError.local(refusal), configHost: false)
                return
            }
        }
        let lock: any StorageLockHandle
        switch storage.lock(host, owner: owner, timeoutSeconds: 300) {
        case .acquired(let acquired): lock = acquired
        case .busy:
            state.withLock { state in
                state.notBefore[host] = now + 30
                state.waitingOnLock.insert(host)
            }
            return
        case .failed(let message):
            fail(host, .local("cannot lock \(host) in storage: \(message)"), configHost: isConfigHost)
            return
        }
        defer { lock.release() }
        state.withLock { _ = $0.waitingOnLock.remove(host) }
        // Another replica may have obtained it while this one waited for the lock.
        if let meta = storage.readMeta(host), meta.renewAt > now, case .success(let bytes) = storage.readCertificate(host),
            (try? ServerCertificate(chainPEM: bytes, keyPEM: bytes)) != nil
        {
            stored(host, meta, obtainedHere: false)
            return
        }
        do {
            let client = try accountClient()
            state.withLock { $0.counters.ordersStarted += 1 }
            if let previous {
                log(.info, "renewing the certificate for \(host) (expires \(CivilTime(unixSeconds: previous.notAfter).isoSecond)Z)")
            } else {
                log(.info, "ordered a certificate for \(host)")
            }
            let procedure = OrderProcedure(
                client: client,
                board: board,
                challengeTypes: challengeTypes,
                dnsHook: settings.dnsHook,
                keyType: settings.keyType,
                heartbeat: { lock.heartbeat() },
                log: { [log] in log(.info, $0) }
            )
            let issued: OrderProcedure.Issued
            let record = { [storage, log] (order: StoredOrder) in
                do {
                    try storage.storeOrder(host, order)
                } catch {
                    log(.warning, "cannot store the order for \(host) (\(error)); a restart before it finishes orders again")
                }
            }
            do {
                issued = try procedure.run(host: host, replacing: previous?.renewalID, resuming: storage.readOrder(host), record: record)
            } catch .refused(let problem, _) where problem.type == "accountDoesNotExist" {
                // The CA no longer knows the stored account (a reset test CA, a deactivated account):
                // register the key again and order once more.
                log(.warning, "the CA does not know the stored ACME account; registering again")
                forgetAccount()
                var again = procedure
                again.client = try accountClient()
                issued = try again.run(host: host, replacing: previous?.renewalID, record: record)
            }
            state.withLock { $0.counters.ordersSucceeded += 1 }
            keep(host, issued, obtainedHere: true)
        } catch {
            fail(host, error, configHost: isConfigHost)
        }
    }

    /// Stores what the CA issued; when the storage fails, serves it from memory and tries storing again
    /// after a short backoff (the next attempt stores it, it does not order).
    private func keep(_ host: String, _ issued: OrderProcedure.Issued, obtainedHere: Bool) {
        do {
            try storage.storeCertificate(host, chainAndKey: issued.pem, meta: issued.meta)
        } catch {
            let certificate = try? ServerCertificate(chainPEM: issued.pem, keyPEM: issued.pem)
            let now = Posix.monotonicMilliseconds()
            state.withLock { state in
                state.unstored[host] = issued
                state.known[host] = Schedule(issued.meta)
                if let certificate { state.cache[host] = Cached(certificate: certificate, stamp: nil, checkedAt: now, lastUse: now) }
            }
            fail(
                host,
                .unstored("the certificate was issued but cannot be stored in \(storage.location) (\(error)); serving it from memory"),
                configHost: true
            )
            return
        }
        state.withLock { _ = $0.unstored.removeValue(forKey: host) }
        if !obtainedHere { log(.info, "stored the certificate for \(host) that was kept in memory (no new order)") }
        stored(host, issued.meta, obtainedHere: obtainedHere)
    }

    private func stored(_ host: String, _ meta: StoredMeta, obtainedHere: Bool) {
        state.withLock { state in
            state.known[host] = Schedule(meta)
            state.failures[host] = nil
            state.notBefore[host] = nil
            state.lastError[host] = nil
            state.cache[host] = nil
            state.nothingStored[host] = nil
        }
        // Into memory here, on the worker: the next handshake serves it without reading the storage.
        _ = load(host, now: Posix.monotonicMilliseconds())
        if obtainedHere {
            log(
                .info,
                "obtained a certificate for \(host) from \(meta.issuer.isEmpty ? "the CA" : meta.issuer), valid until "
                    + "\(CivilTime(unixSeconds: meta.notAfter).isoSecond)Z; renewing around \(CivilTime(unixSeconds: meta.renewAt).isoSecond)Z"
            )
        }
    }

    private func fail(_ host: String, _ error: ACMEError, configHost: Bool) {
        if case .superseded(let message) = error {
            // The replica that took over finishes the order and records how it went.
            log(.info, "stopped working on \(host): \(message)")
            return
        }
        let now = Int(Posix.unixTime())
        let base = configHost || settings.onDemand == nil ? settings.retryAfterFailure : settings.onDemand!.retryAfterFailure
        let delay = state.withLock { state -> Int in
            let failures = (state.failures[host] ?? 0) + 1
            state.failures[host] = failures
            state.counters.ordersFailed += 1
            let delay =
                error.isTransient
                ? RenewalPlan.transientBackoff(failures: failures, base: base)
                : RenewalPlan.backoff(failures: failures, base: base, retryAfter: error.retryAfter)
            state.notBefore[host] = now + delay
            state.lastError[host] = error.description
            return delay
        }
        storage.recordFailure(host, StoredFailure(time: now, message: error.description, nextAttempt: now + delay))
        var message = "could not obtain a certificate for \(host): \(error)"
        if error.retryAfter == nil { message += "; next attempt in \(Durations.words(delay))" }
        log(.warning, message)
    }

    /// Nil when the ask URL allows `host`; else why not.
    private func askAllows(_ host: String, _ ask: String) -> String? {
        let separator = ask.contains("?") ? "&" : "?"
        guard let url = ClientURL("\(ask)\(separator)domain=\(host)") else { return "the ask URL \(ask) is not a URL" }
        switch http.send("GET", url, timeoutMilliseconds: 10_000) {
        case .success(let response) where response.status == 200: return nil
        case .success(let response): return "the ask URL refused \(host) (\(response.status)); no order placed"
        case .failure(let error): return "the ask URL could not be asked about \(host) (\(error.message)); no order placed"
        }
    }

    private func forgetAccount() {
        account.withLock { $0 = nil }
        storage.backend.delete(storage.accountFolder(settings.directory) + "/account.json")
    }

    /// A client with the account: loaded from storage, else created and registered (once, under a lock).
    private func accountClient() throws(ACMEError) -> ACMEClient {
        if let (key, url) = account.withLock({ $0 }) {
            return counted(ACMEClient(directoryURL: settings.directory, http: http, accountKey: key, accountURL: url))
        }
        let backend = storage.backend
        let folder = storage.accountFolder(settings.directory)
        let keyKey = folder + "/account.pem"
        let accountKey = folder + "/account.json"
        let lock: any StorageLockHandle
        switch backend.lock(CertificateStorage.accountLockName, owner: owner, timeoutSeconds: 120) {
        case .acquired(let acquired): lock = acquired
        case .busy: throw .local("another replica holds the account lock in \(storage.location)")
        case .failed(let message): throw .local("cannot lock the account: \(message)")
        }
        defer { lock.release() }
        let key: SigningKey
        switch Result(catching: { () throws(StorageError) in try backend.load(keyKey, limit: 64 * 1024) }) {
        case .success(let bytes):
            guard let parsed = SigningKey(pem: bytes) else {
                throw .local("\(backend.describe(keyKey)) holds no usable account key; move it away to make a new account")
            }
            key = parsed
        case .failure(.missing):
            do {
                key = try SigningKey.generate(.ecdsaP256)
                try backend.store(keyKey, try key.pem(), secret: true)
            } catch {
                throw .local("cannot create the account key in \(backend.describe(folder)): \(error)")
            }
        case .failure(let error):
            // Unreadable is not absent: a new key would orphan the account the stored one registered.
            throw .local("cannot read the account key: \(error)")
        }
        let client = counted(ACMEClient(directoryURL: settings.directory, http: http, accountKey: key))
        var url = (try? backend.load(accountKey, limit: 64 * 1024)).flatMap { JSONParser.parse($0).root?["url"]?.stringValue }
        if url == nil {
            var binding: (keyID: String, hmacKey: [UInt8])?
            if let external = settings.externalAccount {
                guard let hmacKeyFile, let text = try? Posix.readFile(hmacKeyFile, limit: 4096),
                    let hmacKey = Base64URL.decode(String(decoding: text, as: UTF8.self).trimmingWhitespace())
                else { throw .local("cannot read the External Account Binding HMAC key (base64url) from \(hmacKeyFile ?? "?")") }
                binding = (external.keyID, hmacKey)
            }
            let registered = try client.register(email: settings.email, externalAccount: binding)
            log(.info, "registered an ACME account at \(settings.directory)")
            do {
                try backend.store(accountKey, JSONWriter.bytes(.object([("url", .string(registered))]), pretty: true), secret: true)
            } catch {
                throw .local("cannot store the account in \(backend.describe(folder)): \(error)")
            }
            url = registered
        }
        let accountURL = url!
        account.withLock { $0 = (key, accountURL) }
        return counted(ACMEClient(directoryURL: settings.directory, http: http, accountKey: key, accountURL: accountURL))
    }

    private func counted(_ client: ACMEClient) -> ACMEClient {
        client.onBadNonce = { [self] in state.withLock { $0.counters.badNonces += 1 } }
        return client
    }

    private static func why(_ decision: IssuanceDecision) -> String {
        switch decision {
        case .refused(let refusal): return refusal.description
        case .coveredByWildcard(let wildcard): return "the certificate for \(wildcard) covers it"
        case .configHost, .onDemand: return "it is allowed"
        }
    }
}
