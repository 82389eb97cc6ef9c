import AASA
import LinkStore
import Links
import Posix
import Support
import Synchronization

/// Keeps the server's table of stored short links current: loads the link store at start, then asks it
/// for what changed after the revision it holds — when PostgreSQL announces a change, and every
/// `interval` in any case — and publishes a new table (the loops take
/// it with their next batch). Runs on its own thread, so no event loop ever waits on the database; while
/// the database cannot be read, the last table keeps answering and the failure is logged once.
final class StoredLinkWatcher: Sendable {
    static let interval = 250
    static let batch = 10_000

    let location: LinkStoreLocation
    private let published: Mutex<ShortLinkTable>
    private let stopped = Atomic<Bool>(false)
    private let thread = Mutex<Posix.Thread?>(nil)
    /// Cuts the wait short: the link API changed the store, so the change answers at once.
    private let wakeup: EventFDBox?

    var table: ShortLinkTable { published.withLock { $0 } }

    /// Days of counts kept (``ServerSettings/clickRetentionDays``); nil keeps them all.
    let retentionDays: Int?

    /// Opens (creating) the store and loads every link. A SQLite file that cannot be opened is a fault of
    /// this machine: nil, logged. A PostgreSQL server that cannot be reached may be starting with us: the
    /// watcher starts empty and keeps asking, and its links answer once it is reachable.
    init?(location: LinkStoreLocation, retentionDays: Int? = nil) {
        self.location = location
        self.retentionDays = retentionDays
        published = Mutex(.empty)
        wakeup = try? EventFDBox()
        do {
            let database = try LinkDatabase(location)
            published.withLock { $0 = Self.advance(.empty, database) ?? .empty }
        } catch {
            guard case .postgres = location else {
                Log.error("short links: \(error); stored links are not served")
                return nil
            }
            Log.error("short links: \(error); asking again every \(Self.interval) ms, stored links answer once it is reachable")
        }
    }

    /// The table with every change after its revision and the domains switched off now (nil when the
    /// store cannot be read). The switches are a handful of rows, read whole each time.
    private static func advance(_ table: ShortLinkTable, _ database: LinkDatabase) -> ShortLinkTable? {
        var table = table
        do {
            table = table.disabling(Set(try database.disabledDomains().keys)).signing(with: try database.claimKey())
            // Every change read first, then applied at once: a table copies each shard it touches, so
            // applying ten million links batch by batch would copy the whole table a thousand times.
            var pending: [StoredLink] = []
            var revision = table.revision
            while true {
                let changes = try database.changes(after: revision, limit: batch)
                guard let last = changes.last else { break }
                pending += changes
                revision = last.revision
                if changes.count < batch { break }
            }
            return pending.isEmpty ? table : table.applying(pending, revision: revision)
        } catch {
            return nil
        }
    }

    /// How often the loops' clicks are written to the store.
    static let clickMilliseconds: Int64 = 5_000

    /// `takeClicks` gives the clicks the loops counted since it was last called.
    func start(takeClicks: @escaping @Sendable () -> [LoopStats.ClickKey: Int] = { [:] }) {
        let started = try? Posix.Thread { [self] in watch(takeClicks) }
        thread.withLock { $0 = started }
    }

    private func watch(_ takeClicks: @Sendable () -> [LoopStats.ClickKey: Int]) {
        var database: LinkDatabase?
        var failing = false
        var clicks = ClickWriter()
        var clicksWrittenAt = Posix.monotonicMilliseconds()
        var reportedDropped = 0
        // The retention limit: at start, then hourly.
        var forgottenAt: Int64?
        func forgetOldClicks(_ database: LinkDatabase) {
            guard let days = retentionDays else { return }
            let now = Posix.monotonicMilliseconds()
            if let forgottenAt, now - forgottenAt < 3_600_000 { return }
            forgottenAt = now
            let firstKept = String(CivilTime(unixSeconds: Int(Posix.unixTime()) - (days - 1) * 86_400).isoSecond.prefix(10))
            do throws(LinkStoreError) {
                let rows = try database.forgetClicks(before: firstKept)
                if rows > 0 { Log.info("short links: \(rows) counts before \(firstKept) deleted (server.clickRetentionDays \(days))") }
            } catch {
                Log.error("short links: cannot delete counts before \(firstKept): \(error)")
            }
        }
        func writeClicks(_ database: LinkDatabase?) {
            clicks.add(takeClicks())
            clicksWrittenAt = Posix.monotonicMilliseconds()
            if clicks.dropped > reportedDropped {
                Log.error(
                    "short links: \(clicks.dropped - reportedDropped) clicks dropped: over \(ClickWriter.keyLimit) kinds waiting for the store"
                )
                reportedDropped = clicks.dropped
            }
            guard let database else { return }
            do throws(LinkStoreError) {
                try clicks.write(to: database, unixSeconds: Int(Posix.unixTime()))
            } catch {
                Log.error("short links: cannot write clicks to \(location) (\(error)); \(clicks.waiting.count) kinds wait for it")
            }
        }
        defer { writeClicks(database ?? (try? LinkDatabase(location, create: false))) }
        // PostgreSQL tells of every change as it commits (NOTIFY): the store is read at once, and the poll
        // every interval stays as the fallback (and is all SQLite has).
        // Listening from the start: a change committed since the load is read by the first pass anyway.
        if database == nil { database = try? LinkDatabase(location, create: location.isPostgres) }
        var announcements = database?.listenForChanges()
        // An announcement libpq read while the store was being read leaves the socket quiet: it is taken
        // after each read, and the next read starts without waiting.
        var announcedDuringRead = false
        // Opening the store (its client library loaded), the first read and the retention pass are done
        // once; what the passes every interval use stays resident.
        var firstPassDone = false
        while !stopped.load(ordering: .acquiring) {
            let watched = [wakeup?.fd, announcements].compactMap { $0 }
            if announcedDuringRead {
                announcedDuringRead = false
            } else if watched.isEmpty {
                Posix.sleep(milliseconds: Self.interval)
            } else {
                _ = Posix.waitReadable(watched, timeoutMilliseconds: Int32(Self.interval))
                wakeup?.event.drain()
            }
            if let open = database, announcements != nil, (try? open.takeChangeSignals()) == nil {
                database = nil
            }
            // A deleted SQLite file is not made again behind the operator's back; a PostgreSQL database that
            // was down at start gets its tables now.
            if database == nil {
                database = try? LinkDatabase(location, create: location.isPostgres)
                announcements = database?.listenForChanges()
            }
            guard let database, let next = Self.advance(table, database) else {
                if !failing { Log.error("short links: cannot read \(location); the links loaded so far keep answering") }
                failing = true
                database = nil
                announcements = nil
                // The loops' clicks move here, where what waits is bounded, until the store is back.
                if Posix.monotonicMilliseconds() - clicksWrittenAt >= Self.clickMilliseconds { writeClicks(nil) }
                continue
            }
            forgetOldClicks(database)
            if failing { Log.info("short links: \(location) readable again") }
            failing = false
            if next !== table { published.withLock { $0 = next } }
            if Posix.monotonicMilliseconds() - clicksWrittenAt >= Self.clickMilliseconds { writeClicks(database) }
            if announcements != nil, (try? database.takeChangeSignals()) == true { announcedDuringRead = true }
            if !firstPassDone {
                firstPassDone = true
                OneOffWork.end()
            }
        }
    }

    /// Reads the store's changes now instead of at the next interval.
    func nudge() { wakeup?.signal() }

    func stop() {
        stopped.store(true, ordering: .releasing)
        wakeup?.signal()
        thread.withLock { $0 }?.join()
    }
}

extension StoredLinkWatcher {
    /// The watcher of the config's link store (``LinkStoreLocation/configured(_:configPath:)``) when a site
    /// has `links` (stored short links answer on link domains only); nil otherwise.
    static func forConfig(_ config: LoadedConfig, settings: ServerSettings, configPath: String) -> StoredLinkWatcher? {
        guard config.sites.hasLinkRules else { return nil }
        do throws(LinkStoreError) {
            guard let location = try LinkStoreLocation.configured(settings, configPath: configPath) else { return nil }
            return StoredLinkWatcher(location: location, retentionDays: settings.clickRetentionDays)
        } catch {
            Log.error("short links: \(error); stored links are not served")
            return nil
        }
    }
}
