import Posix
import TLS

/// What the manager knows, one record per certificate name: the handshakes, the loader, the scheduler and
/// the workers all read and change the same record under one lock, so no two maps can disagree about a
/// host (a name "absent" in one and "queued" in another was how strangers got orders).
extension CertificateManager {
    /// A certificate ready in memory. A class: a handshake marks its use without rewriting the record.
    final class Cached {
        let certificate: ServerCertificate
        let stamp: String?
        var lastUse: Int64

        init(certificate: ServerCertificate, stamp: String?, lastUse: Int64) {
            self.certificate = certificate
            self.stamp = stamp
            self.lastUse = lastUse
        }
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

    /// What went wrong at a host's last attempt and when to try again. Few hosts ever have one, so it is
    /// kept out of line: a record of a healthy host stays small (100,000 stored certificates cost about
    /// 10 MB of records).
    struct Setback {
        var failures = 0
        /// No attempt before this Unix time; 0 for none.
        var notBefore = 0
        var lastError: String?
        /// Found another replica's lock on it at the last attempt.
        var waitingOnLock = false
        /// Issued but not stored yet (the storage failed): served from memory, stored at the next attempt
        /// instead of ordering again.
        var unstored: OrderProcedure.Issued?

        var isClear: Bool { failures == 0 && notBefore == 0 && lastError == nil && !waitingOnLock && unstored == nil }
    }

    final class SetbackBox {
        let value: Setback
        init(_ value: Setback) { self.value = value }
    }

    struct HostRecord {
        enum Work: UInt8 {
            case idle
            /// Waiting in the order queue.
            case queued
            /// A worker is ordering it now.
            case running
        }

        var cached: Cached?
        /// A stored certificate this replica knows of: when it expires and is renewed (the rest of its
        /// meta is read when renewing).
        var schedule: Schedule?
        /// The decision allows it and the storage had nothing: not looked up again before this monotonic
        /// time (ms); 0 when not known to be missing. Refused names never get a record.
        var nothingStoredUntil: Int64 = 0
        var work = Work.idle
        /// Queued for the loader thread, or being read by it.
        var loading = false
        /// Asked to retry while its order was running: queued again when it ends.
        var retryRequested = false
        private var setbackBox: SetbackBox?

        var setback: Setback {
            get { setbackBox?.value ?? Setback() }
            set { setbackBox = newValue.isClear ? nil : SetbackBox(newValue) }
        }
        var busy: Bool { work != .idle }
        var isEmpty: Bool {
            cached == nil && schedule == nil && nothingStoredUntil == 0 && work == .idle && !loading && !retryRequested
                && setbackBox == nil
        }
    }

    struct State {
        private(set) var records: [String: HostRecord] = [:]
        /// The records holding a certificate in memory, for the cache's bound and eviction.
        private(set) var inMemory: Set<String> = []
        private(set) var nothingStoredCount = 0
        var inputs = IssuanceDecision.Inputs()
        /// Set by the first `update`: until then every name would look unserved, and nothing is removed.
        var configured = false
        var configHosts: Set<String> { inputs.configHosts }
        var queue: OrderQueue
        /// When a full first-order queue was last reported (Unix seconds).
        var lastDropReport = 0
        /// Config hosts still to be looked up in storage.
        var unchecked: [String] = []
        /// Names a handshake asked for that are not in memory, for the loader thread: bounded, never read
        /// on an event loop.
        var loads: [String] = []
        var counters = Counters()
        var stopping = false
        /// First orders being carried out now: they may take every worker but one, which stays free for a
        /// renewal (a certificate about to expire never waits behind made-up names being ordered).
        var runningFirstOrders = 0

        init(queue: OrderQueue) { self.queue = queue }

        /// A host's record; an empty one for a host the manager knows nothing of. Setting an empty record
        /// removes it.
        subscript(host: String) -> HostRecord {
            get { records[host] ?? HostRecord() }
            set {
                let old = records[host]
                if (old?.cached != nil) != (newValue.cached != nil) {
                    if newValue.cached != nil { inMemory.insert(host) } else { inMemory.remove(host) }
                }
                nothingStoredCount += (newValue.nothingStoredUntil != 0 ? 1 : 0) - ((old?.nothingStoredUntil ?? 0) != 0 ? 1 : 0)
                records[host] = newValue.isEmpty ? nil : newValue
            }
        }

        /// Every "nothing stored" forgotten (a new config may serve what the last one did not).
        mutating func forgetNothingStored() {
            for (host, record) in records where record.nothingStoredUntil != 0 { self[host].nothingStoredUntil = 0 }
        }

        /// Whether a handshake for `host` should wait for its order: one is running, or queued and about
        /// to start (one queued behind the rate limits may wait hours).
        func orderComing(_ host: String) -> Bool {
            switch self[host].work {
            case .running: return true
            case .queued: return queue.startsSoon(host, now: Int(Posix.unixTime()))
            case .idle: return false
            }
        }
    }
}
