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
    let state: Mutex<State>
    let account = Mutex<(key: SigningKey, url: String)?>(nil)
    /// The scheduler's wake-up (a new config, stopping); it is the only thread that reads it.
    let schedulerWake: EventFD
    /// The order workers' wake-up: rung when an order is queued or the manager stops. Several workers wait
    /// on it, so it is a doorbell, not an eventfd one of them would drain for all.
    let workerBell = Doorbell()
    let loaderWake: EventFD
    var threads: [Posix.Thread] = []
    /// Told when a certificate a handshake may wait for is ready, or will not come (the server wakes its
    /// event loops, which step their suspended handshakes again).
    let listeners = Mutex<[@Sendable () -> Void]>([])
    /// Names waiting to be read from the storage at most: a flood of made-up names is answered "none".
    static let loadCapacity = 10_000

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
            schedulerWake = try EventFD()
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
        schedulerWake.signal()
        workerBell.ring()
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
            state.forgetNothingStored()
        }
        schedulerWake.signal()
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
            let record = state[key]
            return record.cached?.certificate.notAfter ?? record.schedule?.notAfter
        }
    }

    public var counters: Counters {
        state.withLock { state in
            var counters = state.counters
            counters.cached = state.inMemory.count
            counters.queued = state.queue.count
            counters.dropped = state.queue.dropped
            counters.rateLimited = state.queue.rateLimited
            let now = Int(Posix.unixTime())
            for record in state.records.values {
                let setback = record.setback
                if setback.waitingOnLock {
                    counters.waitingOnLock += 1
                } else if setback.notBefore > now {
                    counters.backingOff += 1
                }
            }
            return counters
        }
    }

    /// Every stored certificate this replica knows of: host and expiry (Unix seconds).
    public var expiries: [(host: String, notAfter: Int)] {
        state.withLock { state in state.records.compactMap { host, record in record.schedule.map { (host, $0.notAfter) } } }
            .sorted { $0.host < $1.host }
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
            state[host].setback.notBefore = 0
            state[host].setback.failures = 0
            guard state[host].busy else { return false }
            state[host].retryRequested = true
            return true
        }
        if busy { return .alreadyQueued(host) }
        enqueue(host)
        return .queued(host)
    }

}
